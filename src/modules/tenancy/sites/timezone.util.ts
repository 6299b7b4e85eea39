import { ValidateBy, ValidationOptions } from 'class-validator';

// Area/Location names only: Intl would also take UTC offsets such as "+05:00", which are not zones.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/** An IANA time zone name the runtime's tz database knows (UTC, Europe/Paris, America/Argentina/Salta). */
export function isIanaTimeZone(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 64 || !ZONE_NAME.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

export const IsIanaTimeZone = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isIanaTimeZone',
      validator: {
        validate: (value) => isIanaTimeZone(value),
        defaultMessage: (args) => `${args?.property ?? 'timezone'} must be an IANA time zone such as America/Chicago`,
      },
    },
    options,
  );
