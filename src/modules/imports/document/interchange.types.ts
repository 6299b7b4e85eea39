import type { ContactPhone } from '../../content/contacts/contact-fields.util';
import type { CustomFieldType, CustomFieldValidation } from '../../content/custom-fields/custom-field-value.util';
import type { ExitCodeSeverity, RunAs, ScriptLanguage, ScriptParameter } from '../../content/scripts/script-shape.util';
import type { PolicyType } from '../../policies/features/policy-feature.types';

/** The neutral interchange document of POST /imports (docs/import-format.md). */
export interface InterchangeDocument {
  format: 'rmm-interchange';
  version: 1;
  source: { system: string; exportedAt?: string };
  account?: { externalId?: string; name?: string };
  customFields?: SourceCustomField[];
  scripts?: SourceScript[];
  policies?: SourcePolicy[];
  customers: SourceCustomer[];
}

export interface SourceCustomer {
  externalId: string;
  name: string;
  locations?: SourceLocation[];
  devices?: SourceDevice[];
  contacts?: SourceContact[];
  customFields?: SourceCustomField[];
  customFieldValues?: SourceValue[];
  deviceGroups?: SourceDeviceGroup[];
  scripts?: SourceScript[];
  policies?: SourcePolicy[];
}

export interface SourceLocation {
  externalId: string;
  name: string;
  timezone?: string;
  customFields?: SourceCustomField[];
  scripts?: SourceScript[];
  policies?: SourcePolicy[];
}

export interface SourceDevice {
  externalId: string;
  hostname: string;
  osType?: string | null;
  locationExternalId?: string | null;
  status?: 'active' | 'decommissioned';
}

export interface SourceContact {
  externalId: string;
  name: string;
  email?: string | null;
  phones?: ContactPhone[];
  title?: string | null;
  notes?: string | null;
  locationExternalId?: string | null;
}

export interface SourceCustomField {
  externalId?: string;
  key: string;
  name: string;
  type: CustomFieldType;
  description?: string | null;
  options?: string[];
  validation?: CustomFieldValidation;
}

export interface SourceValue {
  deviceExternalId?: string;
  hostname?: string;
  field: string;
  value: unknown;
}

export interface SourceDeviceGroup {
  externalId: string;
  name: string;
  locationExternalId?: string | null;
  /** The dynamic-group filter language, naming custom fields by key. */
  filter: Record<string, unknown>;
}

export interface SourceScript {
  externalId: string;
  name: string;
  description?: string | null;
  category?: string;
  language: ScriptLanguage;
  body: string;
  runAs?: RunAs;
  timeoutSeconds?: number;
  parameters?: ScriptParameter[];
  exitCodeSeverityMapping?: ExitCodeSeverity[];
}

export interface SourceAssignment {
  target: 'account' | 'customer' | 'location' | 'deviceGroup' | 'device';
  /** The customer of the target; implied for customer- and location-level policies. */
  customerExternalId?: string;
  /** The location, device group or device, within that customer. */
  externalId?: string;
  priority?: number;
}

export interface SourcePolicy {
  externalId: string;
  name: string;
  type: PolicyType;
  description?: string | null;
  enabled?: boolean;
  features: Record<string, unknown>;
  assignments?: SourceAssignment[];
}
