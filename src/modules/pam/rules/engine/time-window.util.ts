import type { PamTimeWindow } from './rule.types';

/**
 * Rule time windows (docs/pam-rules.md, "Matching"): `start` and `end` are `HH:MM` wall-clock times in
 * `timezone` (default UTC), both inclusive at minute resolution, so 09:00–17:00 covers
 * 09:00:00 through 17:00:59. `start == end` is that one minute. `start > end` is an
 * overnight window whose after-midnight part belongs to the day it started on:
 * days=[5] (Friday) with 22:00–06:00 covers Friday 22:00 to Saturday 06:00:59, and not
 * Friday 03:00.
 */

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/**
 * An `Area/Location` zone name, or `UTC`. Bare names are refused because PostgreSQL
 * reads some of them (`CET`, `EET`, `MET`, `WET`) as fixed-offset abbreviations while
 * the IANA database gives them daylight saving time, and offsets such as `+05:30` are
 * refused because PostgreSQL reads their sign the POSIX way, opposite to ISO 8601.
 * Either would make the preview SQL disagree with the engine.
 */
const ZONE_NAME = /^(?:UTC|[A-Za-z]+(?:\/[A-Za-z0-9_+-]+)+)$/;

export const DEFAULT_TIMEZONE = 'UTC';

export interface CompiledTimeWindow {
  readonly startMinute: number;
  readonly endMinute: number;
  /** Bit d set when the window may start on weekday d (0 = Sunday). */
  readonly dayMask: number;
  readonly timezone: string;
}

export interface LocalTime {
  /** Minutes since local midnight, 0–1439. */
  readonly minute: number;
  /** 0 (Sunday) to 6 (Saturday). */
  readonly weekday: number;
}

export function parseMinuteOfDay(value: string): number | null {
  const match = HH_MM.exec(value);
  return match ? Number(match[1]) * 60 + Number(match[2]) : null;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timezone: string): Intl.DateTimeFormat | null {
  // Zone names are case-insensitive in both Intl and PostgreSQL; one key per zone keeps the cache bounded.
  const key = timezone.toLowerCase();
  let formatter = formatters.get(key);
  if (!formatter) {
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone: timezone,
        hourCycle: 'h23',
        weekday: 'short',
        hour: '2-digit',
        minute: '2-digit',
      });
    } catch {
      return null;
    }
    formatters.set(key, formatter);
  }
  return formatter;
}

export function isValidTimeZone(timezone: string): boolean {
  return ZONE_NAME.test(timezone) && formatterFor(timezone) !== null;
}

export function validateTimeWindow(window: unknown): string[] {
  if (typeof window !== 'object' || window === null || Array.isArray(window)) {
    return ['timeWindow must be an object with start and end'];
  }
  const { start, end, days, timezone } = window as Record<string, unknown>;
  const problems: string[] = [];
  for (const [name, value] of [
    ['start', start],
    ['end', end],
  ] as const) {
    if (typeof value !== 'string' || parseMinuteOfDay(value) === null) {
      problems.push(`timeWindow.${name} must be HH:MM between 00:00 and 23:59`);
    }
  }
  if (days !== undefined && days !== null) {
    if (!Array.isArray(days) || days.length === 0) {
      problems.push('timeWindow.days must be a non-empty array of weekdays 0 (Sunday) to 6 (Saturday)');
    } else if (!days.every((day) => Number.isInteger(day) && day >= 0 && day <= 6)) {
      problems.push('timeWindow.days may only hold integers 0 (Sunday) to 6 (Saturday)');
    }
  }
  if (timezone !== undefined && timezone !== null) {
    if (typeof timezone !== 'string' || !isValidTimeZone(timezone)) {
      problems.push('timeWindow.timezone must be an IANA zone name such as Europe/Paris, or UTC');
    }
  }
  return problems;
}

/** Throws a RangeError naming the problems when the window is invalid. */
export function compileTimeWindow(window: PamTimeWindow): CompiledTimeWindow {
  const problems = validateTimeWindow(window);
  if (problems.length > 0) throw new RangeError(problems.join('; '));
  const days = window.days ?? null;
  return {
    startMinute: parseMinuteOfDay(window.start)!,
    endMinute: parseMinuteOfDay(window.end)!,
    dayMask: days === null ? 0b1111111 : days.reduce((mask, day) => mask | (1 << day), 0),
    timezone: window.timezone ?? DEFAULT_TIMEZONE,
  };
}

const WEEKDAYS: Readonly<Record<string, number>> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

/** Wall-clock minute and weekday of an instant in a zone; null for an invalid Date or zone. */
export function localTimeAt(timezone: string, at: Date): LocalTime | null {
  const formatter = formatterFor(timezone);
  if (formatter === null || Number.isNaN(at.getTime())) return null;
  let hour = 0;
  let minute = 0;
  let weekday = 0;
  for (const part of formatter.formatToParts(at)) {
    if (part.type === 'hour') hour = Number(part.value);
    else if (part.type === 'minute') minute = Number(part.value);
    else if (part.type === 'weekday') weekday = WEEKDAYS[part.value];
  }
  return { minute: hour * 60 + minute, weekday };
}

export function isWithinCompiledWindow(window: CompiledTimeWindow, local: LocalTime): boolean {
  const { startMinute, endMinute, dayMask } = window;
  const { minute, weekday } = local;
  if (startMinute <= endMinute) {
    return minute >= startMinute && minute <= endMinute && (dayMask & (1 << weekday)) !== 0;
  }
  if (minute >= startMinute && (dayMask & (1 << weekday)) !== 0) return true;
  const previousDay = (weekday + 6) % 7;
  return minute <= endMinute && (dayMask & (1 << previousDay)) !== 0;
}

/** Throws a RangeError for an invalid window; false for an invalid Date. */
export function isWithinWindow(window: PamTimeWindow, at: Date): boolean {
  const compiled = compileTimeWindow(window);
  const local = localTimeAt(compiled.timezone, at);
  return local !== null && isWithinCompiledWindow(compiled, local);
}
