import { isIanaTimeZone } from './timezone.util';

describe('isIanaTimeZone', () => {
  it.each(['UTC', 'America/Chicago', 'Europe/Paris', 'America/Argentina/Salta', 'Etc/GMT+5', 'Asia/Kolkata'])('accepts %s', (tz) => {
    expect(isIanaTimeZone(tz)).toBe(true);
  });

  it.each(['', 'Mars/Olympus_Mons', 'America/', '+05:00', 'UTC+5', '../etc/passwd', 'America/Chicago ', 42, null])('rejects %p', (tz) => {
    expect(isIanaTimeZone(tz)).toBe(false);
  });

  it('rejects names longer than the stored column', () => expect(isIanaTimeZone(`America/${'A'.repeat(60)}`)).toBe(false));
});
