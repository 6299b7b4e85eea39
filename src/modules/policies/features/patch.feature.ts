import type { Path, Problem } from '../../../common/shape/path.util';
import { isIanaTimeZone } from '../../tenancy/sites/timezone.util';
import type { PolicyFeature } from './policy-feature.types';

interface Schedule {
  frequency: 'daily' | 'weekly' | 'monthly';
  dayOfWeek?: string;
  dayOfMonth?: number;
  time: string;
  timezone?: string;
}

const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

function scheduleRules(s: Schedule, path: Path): Problem[] {
  const problems: Problem[] = [];
  if (s.frequency === 'weekly' && s.dayOfWeek === undefined) problems.push([[...path, 'dayOfWeek'], 'a weekly schedule needs dayOfWeek']);
  if (s.frequency === 'monthly' && s.dayOfMonth === undefined) problems.push([[...path, 'dayOfMonth'], 'a monthly schedule needs dayOfMonth']);
  if (s.frequency !== 'weekly' && s.dayOfWeek !== undefined) problems.push([[...path, 'dayOfWeek'], `dayOfWeek does not apply to a ${s.frequency} schedule`]);
  if (s.frequency !== 'monthly' && s.dayOfMonth !== undefined) problems.push([[...path, 'dayOfMonth'], `dayOfMonth does not apply to a ${s.frequency} schedule`]);
  if (s.timezone !== undefined && !isIanaTimeZone(s.timezone)) problems.push([[...path, 'timezone'], 'timezone must be an IANA time zone such as Europe/Paris']);
  return problems;
}

/** Operating-system patching: when to install, what is approved without review, reboots. */
export const PATCH_FEATURE: PolicyFeature = {
  name: 'patch',
  types: ['patch'],
  description: 'Patch schedule, automatic approval by severity, reboot behaviour, deferral and exclusions.',
  shape: {
    type: 'object',
    required: ['schedule'],
    properties: {
      schedule: {
        type: 'object',
        required: ['frequency', 'time'],
        properties: {
          frequency: { type: 'string', enum: ['daily', 'weekly', 'monthly'] },
          dayOfWeek: { type: 'string', enum: DAYS },
          // 1 to 28 so that every month has the day.
          dayOfMonth: { type: 'integer', minimum: 1, maximum: 28 },
          time: { type: 'string', pattern: /^([01]\d|2[0-3]):[0-5]\d$/, description: 'HH:MM, 00:00 to 23:59, in the schedule time zone.' },
          timezone: { type: 'string', maxLength: 64, description: 'IANA time zone; the device local time when absent.' },
        },
        check: scheduleRules,
      },
      autoApprove: {
        type: 'object',
        properties: {
          critical: { type: 'boolean' },
          important: { type: 'boolean' },
          moderate: { type: 'boolean' },
          low: { type: 'boolean' },
          other: { type: 'boolean' },
        },
      },
      rebootBehavior: { type: 'string', enum: ['never', 'if_required', 'always'] },
      deferDays: { type: 'integer', minimum: 0, maximum: 90 },
      excludedKbs: { type: 'array', maxItems: 500, items: { type: 'string', pattern: /^KB\d{4,8}$/ } },
    },
  },
};
