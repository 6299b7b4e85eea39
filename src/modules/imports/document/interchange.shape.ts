import { CONTACT_LIMITS, PHONE_TYPES } from '../../content/contacts/contact-fields.util';
import { CUSTOM_FIELD_KEY, CUSTOM_FIELD_LIMITS, CUSTOM_FIELD_TYPES, definitionProblems } from '../../content/custom-fields/custom-field-value.util';
import type { Path, Problem } from '../../../common/shape/path.util';
import type { Shape } from '../../../common/shape/shape.util';
import { mappingProblems, parameterProblems, PARAMETER_TYPES, RUN_AS, SCRIPT_LANGUAGES, SCRIPT_LIMITS, SEVERITIES } from '../../content/scripts/script-shape.util';
import { featureProblems } from '../../policies/features/policy-feature.registry';
import { POLICY_TYPES, PolicyType } from '../../policies/features/policy-feature.types';
import { isIanaTimeZone } from '../../tenancy/sites/timezone.util';
import type { SourceCustomField, SourceScript } from './interchange.types';

/** Limits of one document (docs/import-format.md). */
export const DOCUMENT_LIMITS = {
  customers: 10_000,
  locations: 1_000,
  devices: 200_000,
  contacts: 200_000,
  values: 2_000_000,
  groups: 1_000,
  customFields: 500,
  scripts: 2_000,
  policies: 1_000,
  assignments: 1_000,
} as const;

const externalId: Shape = { type: 'string', minLength: 1, maxLength: 255, description: 'The id of the record in the source system.' };
const name: Shape = { type: 'string', minLength: 1, maxLength: 255 };
const ref: Shape = { type: 'string', minLength: 1, maxLength: 255, nullable: true };

const prefixed = (path: Path, problems: Problem[]): Problem[] => problems.map(([p, m]): Problem => [[...path, ...p], m]);

const customField: Shape = {
  type: 'object',
  required: ['key', 'name', 'type'],
  properties: {
    externalId,
    key: { type: 'string', pattern: CUSTOM_FIELD_KEY, description: 'Unique among the fields one organization sees.' },
    name,
    type: { type: 'string', enum: CUSTOM_FIELD_TYPES },
    description: { type: 'string', maxLength: 1000, nullable: true },
    options: { type: 'array', maxItems: CUSTOM_FIELD_LIMITS.options, items: { type: 'string', minLength: 1, maxLength: CUSTOM_FIELD_LIMITS.optionLength } },
    validation: {
      type: 'object',
      properties: {
        maxLength: { type: 'integer', minimum: 1, maximum: CUSTOM_FIELD_LIMITS.textLength },
        min: { type: 'number' },
        max: { type: 'number' },
        integer: { type: 'boolean' },
      },
    },
  },
  check: (f: SourceCustomField, path: Path) => prefixed(path, definitionProblems({ type: f.type, options: f.options?.map((o) => o.trim()), validation: f.validation }).map(([field, m]): Problem => [field.split(/[.[\]]/).filter(Boolean).map((s) => (/^\d+$/.test(s) ? Number(s) : s)), m])),
};

const script: Shape = {
  type: 'object',
  required: ['externalId', 'name', 'language', 'body'],
  properties: {
    externalId,
    name,
    description: { type: 'string', maxLength: 2000, nullable: true },
    category: { type: 'string', minLength: 1, maxLength: 100 },
    language: { type: 'string', enum: SCRIPT_LANGUAGES },
    body: { type: 'string', minLength: 1, maxLength: SCRIPT_LIMITS.body },
    runAs: { type: 'string', enum: RUN_AS },
    timeoutSeconds: { type: 'integer', minimum: 1, maximum: 86_400 },
    parameters: {
      type: 'array',
      maxItems: SCRIPT_LIMITS.parameters,
      items: {
        type: 'object',
        required: ['name', 'type'],
        properties: {
          name: { type: 'string', minLength: 1, maxLength: SCRIPT_LIMITS.parameterName },
          type: { type: 'string', enum: PARAMETER_TYPES },
          required: { type: 'boolean' },
          default: { type: 'any' },
          description: { type: 'string', maxLength: SCRIPT_LIMITS.parameterDescription },
        },
      },
    },
    exitCodeSeverityMapping: {
      type: 'array',
      maxItems: SCRIPT_LIMITS.mappings,
      description: 'Each entry maps one exitCode, or an inclusive from..to range, to a severity; entries may not overlap.',
      items: {
        type: 'object',
        required: ['severity'],
        properties: {
          exitCode: { type: 'integer' },
          from: { type: 'integer' },
          to: { type: 'integer' },
          severity: { type: 'string', enum: SEVERITIES },
        },
      },
    },
  },
  check: (s: SourceScript, path: Path) => [
    ...prefixed([...path, 'parameters'], parameterProblems(s.parameters ?? [])),
    ...prefixed([...path, 'exitCodeSeverityMapping'], mappingProblems(s.exitCodeSeverityMapping ?? [])),
  ],
};

const policy: Shape = {
  type: 'object',
  required: ['externalId', 'name', 'type', 'features'],
  properties: {
    externalId,
    name,
    type: { type: 'string', enum: POLICY_TYPES },
    description: { type: 'string', maxLength: 2000, nullable: true },
    enabled: { type: 'boolean' },
    features: { type: 'object', properties: {}, additionalProperties: { type: 'any' }, description: 'Settings keyed by feature name, as in POST /policies.' },
    assignments: {
      type: 'array',
      maxItems: DOCUMENT_LIMITS.assignments,
      items: {
        type: 'object',
        required: ['target'],
        properties: {
          target: { type: 'string', enum: ['account', 'customer', 'location', 'deviceGroup', 'device'] },
          customerExternalId: externalId,
          externalId,
          priority: { type: 'integer', minimum: 0, maximum: 10_000 },
        },
      },
    },
  },
  check: (p: { type: PolicyType; features: unknown }, path: Path) => prefixed([...path, 'features'], featureProblems(p.type, p.features)),
};

const scoped = (extra: Record<string, Shape>) => ({
  customFields: { type: 'array', maxItems: DOCUMENT_LIMITS.customFields, uniqueBy: 'key', items: customField } as Shape,
  scripts: { type: 'array', maxItems: DOCUMENT_LIMITS.scripts, uniqueBy: 'externalId', items: script } as Shape,
  policies: { type: 'array', maxItems: DOCUMENT_LIMITS.policies, uniqueBy: 'externalId', items: policy } as Shape,
  ...extra,
});

/** One contact; also the shape of a row of the contacts CSV. */
export const CONTACT_SHAPE: Shape = {
  type: 'object',
  required: ['externalId', 'name'],
  properties: {
    externalId,
    name: { type: 'string', minLength: 1, maxLength: CONTACT_LIMITS.name },
    email: { type: 'string', format: 'email', maxLength: CONTACT_LIMITS.email, nullable: true },
    phones: {
      type: 'array',
      maxItems: CONTACT_LIMITS.phones,
      items: {
        type: 'object',
        required: ['type', 'number'],
        properties: {
          type: { type: 'string', enum: PHONE_TYPES },
          number: { type: 'string', minLength: 1, maxLength: CONTACT_LIMITS.phone, pattern: /^[0-9+().\-/ x#*]+$/ },
        },
      },
    },
    title: { type: 'string', maxLength: CONTACT_LIMITS.title, nullable: true },
    notes: { type: 'string', maxLength: CONTACT_LIMITS.notes, nullable: true },
    locationExternalId: ref,
  },
};

const location: Shape = {
  type: 'object',
  required: ['externalId', 'name'],
  properties: {
    externalId,
    name,
    timezone: { type: 'string', maxLength: 64, description: 'IANA time zone; UTC when absent.' },
    ...scoped({}),
  },
  check: (l: { timezone?: string }, path: Path) => (l.timezone !== undefined && !isIanaTimeZone(l.timezone) ? [[[...path, 'timezone'], 'must be an IANA time zone such as America/Chicago']] : []),
};

const customer: Shape = {
  type: 'object',
  required: ['externalId', 'name'],
  properties: {
    externalId,
    name,
    locations: { type: 'array', maxItems: DOCUMENT_LIMITS.locations, uniqueBy: 'externalId', items: location },
    devices: {
      type: 'array',
      maxItems: DOCUMENT_LIMITS.devices,
      uniqueBy: 'externalId',
      items: {
        type: 'object',
        required: ['externalId', 'hostname'],
        properties: {
          externalId,
          hostname: name,
          osType: { type: 'string', maxLength: 32, nullable: true },
          locationExternalId: ref,
          status: { type: 'string', enum: ['active', 'decommissioned'] },
        },
      },
    },
    contacts: {
      type: 'array',
      maxItems: DOCUMENT_LIMITS.contacts,
      uniqueBy: 'externalId',
      items: CONTACT_SHAPE,
    },
    customFieldValues: {
      type: 'array',
      maxItems: DOCUMENT_LIMITS.values,
      items: {
        type: 'object',
        required: ['field', 'value'],
        properties: {
          deviceExternalId: externalId,
          hostname: name,
          field: { type: 'string', pattern: CUSTOM_FIELD_KEY, description: 'The key of a custom field of the organization or of the partner.' },
          value: { type: 'any', description: 'Typed per the field: string, number, boolean, YYYY-MM-DD, an option, or an array of options.' },
        },
        check: (v: { deviceExternalId?: string; hostname?: string }, path: Path) =>
          v.deviceExternalId === undefined && v.hostname === undefined ? [[path, 'a value row names its device by deviceExternalId or hostname']] : [],
      },
    },
    deviceGroups: {
      type: 'array',
      maxItems: DOCUMENT_LIMITS.groups,
      uniqueBy: 'externalId',
      items: {
        type: 'object',
        required: ['externalId', 'name', 'filter'],
        properties: {
          externalId,
          name,
          locationExternalId: ref,
          filter: { type: 'object', properties: {}, additionalProperties: { type: 'any' }, description: 'The dynamic-group filter language; customField names a field key defined in this document.' },
        },
      },
    },
    ...scoped({}),
  },
};

/** The whole document. Cross-references (locations, keys, assignment targets) are checked after it. */
export const INTERCHANGE_SHAPE: Shape = {
  type: 'object',
  required: ['format', 'version', 'source', 'customers'],
  properties: {
    $schema: { type: 'string', maxLength: 500 },
    format: { type: 'const', value: 'rmm-interchange' },
    version: { type: 'const', value: 1 },
    source: {
      type: 'object',
      required: ['system'],
      properties: {
        system: { type: 'string', pattern: /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, description: 'Names the source RMM; external ids are scoped to it.' },
        exportedAt: { type: 'string', format: 'date-time' },
      },
    },
    account: { type: 'object', properties: { externalId, name }, description: 'The source account; it maps to the importing partner.' },
    ...scoped({}),
    customers: { type: 'array', maxItems: DOCUMENT_LIMITS.customers, uniqueBy: 'externalId', items: customer },
  },
};
