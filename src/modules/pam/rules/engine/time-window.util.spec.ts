import {
  compileTimeWindow,
  isValidTimeZone,
  isWithinWindow,
  localTimeAt,
  parseMinuteOfDay,
  validateTimeWindow,
} from './time-window.util';

const at = (iso: string) => new Date(iso);

describe('validateTimeWindow', () => {
  it('accepts a complete window and reports nothing', () => {
    expect(validateTimeWindow({ start: '00:00', end: '23:59', days: [0, 6], timezone: 'America/Chicago' })).toEqual([]);
    expect(validateTimeWindow({ start: '09:00', end: '17:00' })).toEqual([]);
    expect(validateTimeWindow({ start: '09:00', end: '17:00', days: null, timezone: null })).toEqual([]);
  });

  it.each(['24:00', '9:00', '09:60', '0900', ' 09:00', '09:00:00', '', '-1:00'])('rejects the time %j', (time) => {
    expect(validateTimeWindow({ start: time, end: '10:00' })).toEqual([
      'timeWindow.start must be HH:MM between 00:00 and 23:59',
    ]);
    expect(validateTimeWindow({ start: '10:00', end: time })).toEqual([
      'timeWindow.end must be HH:MM between 00:00 and 23:59',
    ]);
  });

  it('rejects an empty day list and days outside 0 to 6', () => {
    expect(validateTimeWindow({ start: '09:00', end: '17:00', days: [] })).toHaveLength(1);
    expect(validateTimeWindow({ start: '09:00', end: '17:00', days: [7] })).toHaveLength(1);
    expect(validateTimeWindow({ start: '09:00', end: '17:00', days: [-1] })).toHaveLength(1);
    expect(validateTimeWindow({ start: '09:00', end: '17:00', days: [1.5] })).toHaveLength(1);
    expect(validateTimeWindow({ start: '09:00', end: '17:00', days: ['1'] })).toHaveLength(1);
    expect(validateTimeWindow({ start: '09:00', end: '17:00', days: 1 })).toHaveLength(1);
  });

  it('rejects zones that are unknown, offsets, or bare abbreviations PostgreSQL would read differently', () => {
    for (const timezone of ['Mars/Olympus_Mons', '+05:30', 'UTC+5', 'CET', 'EST', 'local', '', 42]) {
      expect(validateTimeWindow({ start: '09:00', end: '17:00', timezone })).toEqual([
        'timeWindow.timezone must be an IANA zone name such as Europe/Paris, or UTC',
      ]);
    }
  });

  it('reports every problem at once', () => {
    expect(validateTimeWindow({ start: '25:00', end: 'x', days: [9], timezone: 'Nowhere/Land' })).toHaveLength(4);
  });

  it('rejects anything that is not an object', () => {
    expect(validateTimeWindow(null)).toEqual(['timeWindow must be an object with start and end']);
    expect(validateTimeWindow('09:00-17:00')).toEqual(['timeWindow must be an object with start and end']);
    expect(validateTimeWindow([])).toEqual(['timeWindow must be an object with start and end']);
  });
});

describe('isValidTimeZone', () => {
  it('accepts UTC and Area/Location names in any case, including Etc zones and links', () => {
    for (const zone of ['UTC', 'America/Chicago', 'america/chicago', 'Asia/Kolkata', 'Asia/Calcutta', 'Etc/GMT+5']) {
      expect(isValidTimeZone(zone)).toBe(true);
    }
    expect(isValidTimeZone('America/Argentina/Buenos_Aires')).toBe(true);
  });

  it('rejects names Intl does not know', () => {
    expect(isValidTimeZone('America/Atlantis')).toBe(false);
  });
});

describe('parseMinuteOfDay', () => {
  it('reads HH:MM as minutes since midnight', () => {
    expect(parseMinuteOfDay('00:00')).toBe(0);
    expect(parseMinuteOfDay('23:59')).toBe(1439);
    expect(parseMinuteOfDay('24:00')).toBeNull();
  });
});

describe('localTimeAt', () => {
  it('gives the wall-clock minute and weekday in the zone', () => {
    // 2025-01-17 is a Friday; 20:00 UTC is 01:30 on Saturday in India (+05:30).
    expect(localTimeAt('Asia/Kolkata', at('2025-01-17T20:00:00Z'))).toEqual({ minute: 90, weekday: 6 });
    expect(localTimeAt('UTC', at('2025-01-17T20:00:00Z'))).toEqual({ minute: 1200, weekday: 5 });
    expect(localTimeAt('America/Chicago', at('2025-01-17T03:00:00Z'))).toEqual({ minute: 21 * 60, weekday: 4 });
  });

  it('reads midnight as minute 0, not 24:00', () => {
    expect(localTimeAt('UTC', at('2025-01-18T00:00:00Z'))).toEqual({ minute: 0, weekday: 6 });
  });

  it('is null for an invalid date', () => {
    expect(localTimeAt('UTC', new Date(Number.NaN))).toBeNull();
  });
});

describe('isWithinWindow', () => {
  const office = { start: '09:00', end: '17:00', timezone: 'America/Chicago' };

  it('includes both ends at minute resolution', () => {
    // January: Chicago is UTC-6.
    expect(isWithinWindow(office, at('2025-01-15T14:59:59.999Z'))).toBe(false);
    expect(isWithinWindow(office, at('2025-01-15T15:00:00Z'))).toBe(true);
    expect(isWithinWindow(office, at('2025-01-15T23:00:59.999Z'))).toBe(true);
    expect(isWithinWindow(office, at('2025-01-15T23:01:00Z'))).toBe(false);
  });

  it('follows daylight saving time in the rule zone', () => {
    // July: Chicago is UTC-5, so 09:00 local is 14:00 UTC.
    expect(isWithinWindow(office, at('2025-07-15T13:59:00Z'))).toBe(false);
    expect(isWithinWindow(office, at('2025-07-15T14:00:00Z'))).toBe(true);
    expect(isWithinWindow(office, at('2025-07-15T22:00:00Z'))).toBe(true);
    expect(isWithinWindow(office, at('2025-07-15T22:01:00Z'))).toBe(false);
  });

  it('never matches a wall-clock minute skipped by the spring-forward change', () => {
    const skipped = { start: '02:00', end: '02:59', timezone: 'America/Chicago' };
    // 2025-03-09: 01:59 CST (07:59 UTC) is followed by 03:00 CDT (08:00 UTC).
    expect(isWithinWindow(skipped, at('2025-03-09T07:59:00Z'))).toBe(false);
    expect(isWithinWindow(skipped, at('2025-03-09T08:00:00Z'))).toBe(false);
    expect(isWithinWindow({ ...skipped, start: '03:00', end: '03:00' }, at('2025-03-09T08:00:00Z'))).toBe(true);
  });

  it('matches both occurrences of a wall-clock minute repeated by the fall-back change', () => {
    const repeated = { start: '01:30', end: '01:30', timezone: 'America/Chicago' };
    // 2025-11-02: 01:30 CDT is 06:30 UTC, 01:30 CST is 07:30 UTC.
    expect(isWithinWindow(repeated, at('2025-11-02T06:30:00Z'))).toBe(true);
    expect(isWithinWindow(repeated, at('2025-11-02T07:30:00Z'))).toBe(true);
    expect(isWithinWindow(repeated, at('2025-11-02T07:00:00Z'))).toBe(false);
  });

  it('handles half-hour offsets such as India (+05:30)', () => {
    const window = { start: '09:00', end: '09:00', timezone: 'Asia/Kolkata' };
    expect(isWithinWindow(window, at('2025-06-02T03:29:59Z'))).toBe(false);
    expect(isWithinWindow(window, at('2025-06-02T03:30:00Z'))).toBe(true);
    expect(isWithinWindow(window, at('2025-06-02T03:31:00Z'))).toBe(false);
  });

  it('takes the weekday in the rule zone, not in UTC', () => {
    // Friday 20:00 UTC is Saturday 01:30 in India.
    const saturdayNight = { start: '01:00', end: '02:00', days: [6], timezone: 'Asia/Kolkata' };
    expect(isWithinWindow(saturdayNight, at('2025-01-17T20:00:00Z'))).toBe(true);
    expect(isWithinWindow({ ...saturdayNight, days: [5] }, at('2025-01-17T20:00:00Z'))).toBe(false);
  });

  it('defaults to UTC', () => {
    const window = { start: '09:00', end: '09:00' };
    expect(isWithinWindow(window, at('2025-01-15T09:00:30Z'))).toBe(true);
    expect(isWithinWindow(window, at('2025-01-15T15:00:00Z'))).toBe(false);
  });

  it('matches one minute when start equals end', () => {
    const window = { start: '12:34', end: '12:34' };
    expect(isWithinWindow(window, at('2025-01-15T12:33:59Z'))).toBe(false);
    expect(isWithinWindow(window, at('2025-01-15T12:34:00Z'))).toBe(true);
    expect(isWithinWindow(window, at('2025-01-15T12:34:59Z'))).toBe(true);
    expect(isWithinWindow(window, at('2025-01-15T12:35:00Z'))).toBe(false);
  });

  it('covers the whole day with 00:00 to 23:59', () => {
    const window = { start: '00:00', end: '23:59' };
    expect(isWithinWindow(window, at('2025-01-15T00:00:00Z'))).toBe(true);
    expect(isWithinWindow(window, at('2025-01-15T23:59:59Z'))).toBe(true);
  });

  describe('overnight windows', () => {
    // 2025-01-16 is a Thursday, 17 a Friday, 18 a Saturday.
    const fridayNight = { start: '22:00', end: '06:00', days: [5] };

    it('match from the start on a listed day until midnight', () => {
      expect(isWithinWindow(fridayNight, at('2025-01-17T21:59:59Z'))).toBe(false);
      expect(isWithinWindow(fridayNight, at('2025-01-17T22:00:00Z'))).toBe(true);
      expect(isWithinWindow(fridayNight, at('2025-01-17T23:59:59Z'))).toBe(true);
    });

    it('give the after-midnight part to the day the window started on', () => {
      expect(isWithinWindow(fridayNight, at('2025-01-18T00:00:00Z'))).toBe(true);
      expect(isWithinWindow(fridayNight, at('2025-01-18T03:00:00Z'))).toBe(true);
      expect(isWithinWindow(fridayNight, at('2025-01-18T06:00:59Z'))).toBe(true);
      expect(isWithinWindow(fridayNight, at('2025-01-18T06:01:00Z'))).toBe(false);
    });

    it('do not match the early hours of the listed day itself', () => {
      expect(isWithinWindow(fridayNight, at('2025-01-17T03:00:00Z'))).toBe(false);
    });

    it('do not match the evening of the next day', () => {
      expect(isWithinWindow(fridayNight, at('2025-01-18T22:00:00Z'))).toBe(false);
    });

    it('wrap from Saturday into Sunday', () => {
      const saturdayNight = { start: '23:00', end: '01:00', days: [6] };
      // 2025-01-19 is a Sunday.
      expect(isWithinWindow(saturdayNight, at('2025-01-19T00:30:00Z'))).toBe(true);
      expect(isWithinWindow(saturdayNight, at('2025-01-20T00:30:00Z'))).toBe(false);
    });

    it('match every night when no days are listed', () => {
      const nightly = { start: '22:00', end: '06:00' };
      expect(isWithinWindow(nightly, at('2025-01-15T03:00:00Z'))).toBe(true);
      expect(isWithinWindow(nightly, at('2025-01-15T12:00:00Z'))).toBe(false);
    });

    it('apply the start day in the rule zone', () => {
      // Friday 22:00 to Saturday 06:00 in Chicago (UTC-6) is Saturday 04:00 to 12:00 UTC.
      const chicago = { ...fridayNight, timezone: 'America/Chicago' };
      expect(isWithinWindow(chicago, at('2025-01-18T04:00:00Z'))).toBe(true);
      expect(isWithinWindow(chicago, at('2025-01-18T09:00:00Z'))).toBe(true);
      expect(isWithinWindow(chicago, at('2025-01-18T12:01:00Z'))).toBe(false);
      expect(isWithinWindow(chicago, at('2025-01-17T23:00:00Z'))).toBe(false);
    });
  });

  it('is false for an invalid date', () => {
    expect(isWithinWindow({ start: '00:00', end: '23:59' }, new Date(Number.NaN))).toBe(false);
  });

  it('throws for an invalid window instead of guessing', () => {
    expect(() => isWithinWindow({ start: '9:00', end: '17:00' }, at('2025-01-15T12:00:00Z'))).toThrow(RangeError);
    expect(() => isWithinWindow({ start: '09:00', end: '17:00', timezone: 'CET' }, new Date())).toThrow(
      /timezone/,
    );
  });
});

describe('compileTimeWindow', () => {
  it('turns days into a bit mask and defaults the zone to UTC', () => {
    expect(compileTimeWindow({ start: '22:00', end: '06:00', days: [0, 5] })).toEqual({
      startMinute: 1320,
      endMinute: 360,
      dayMask: 0b0100001,
      timezone: 'UTC',
    });
    expect(compileTimeWindow({ start: '09:00', end: '17:00' }).dayMask).toBe(0b1111111);
  });
});
