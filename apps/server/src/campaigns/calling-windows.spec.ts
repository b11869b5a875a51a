import { isKnownTimeZone, isWithinCallingWindows, localTimeIn, openTimeZones } from './calling-windows';

describe('calling windows', () => {
  // Monday 2026-12-07, 16:30 UTC.
  const monday = new Date('2026-12-07T16:30:00Z');

  it('reads the local weekday and time of an instant in a zone', () => {
    expect(localTimeIn(monday, 'UTC')).toEqual({ weekday: 'mon', minutes: 16 * 60 + 30 });
    expect(localTimeIn(monday, 'America/Los_Angeles')).toEqual({ weekday: 'mon', minutes: 8 * 60 + 30 });
    // Past midnight in Tokyo: already Tuesday.
    expect(localTimeIn(monday, 'Asia/Tokyo')).toEqual({ weekday: 'tue', minutes: 1 * 60 + 30 });
  });

  it('follows daylight saving time (New York is UTC-4 in July, UTC-5 in December)', () => {
    expect(localTimeIn(new Date('2026-07-06T13:00:00Z'), 'America/New_York').minutes).toBe(9 * 60);
    expect(localTimeIn(new Date('2026-12-07T13:00:00Z'), 'America/New_York').minutes).toBe(8 * 60);
  });

  it('admits a local time from `from` up to, not including, `to`, on the windows of that weekday only', () => {
    const windows = { mon: [{ from: '09:00', to: '17:00' }], tue: [{ from: '00:00', to: '24:00' }] };
    expect(isWithinCallingWindows(windows, monday, 'UTC')).toBe(true);
    expect(isWithinCallingWindows(windows, new Date('2026-12-07T17:00:00Z'), 'UTC')).toBe(false);
    expect(isWithinCallingWindows(windows, new Date('2026-12-07T09:00:00Z'), 'UTC')).toBe(true);
    expect(isWithinCallingWindows(windows, monday, 'America/Los_Angeles')).toBe(false);
    expect(isWithinCallingWindows(windows, monday, 'Asia/Tokyo')).toBe(true);
    expect(isWithinCallingWindows(windows, new Date('2026-12-06T12:00:00Z'), 'UTC')).toBe(false);
  });

  it('lists the zones whose contacts may be called now, never a zone Intl does not know', () => {
    const windows = { mon: [{ from: '09:00', to: '17:00' }] };
    // 16:30 in London, 11:30 in New York, 08:30 in Los Angeles, 17:30 in Paris.
    expect(openTimeZones(windows, ['UTC', 'America/Los_Angeles', 'America/New_York', 'Europe/Paris', 'Mars/Olympus'], monday)).toEqual(['UTC', 'America/New_York']);
  });

  it('knows IANA zones and refuses the rest', () => {
    for (const zone of ['UTC', 'Europe/Paris', 'America/Argentina/Buenos_Aires']) expect(isKnownTimeZone(zone)).toBe(true);
    for (const zone of ['Mars/Olympus', '', 'x'.repeat(65), 'Europe/Pariss']) expect(isKnownTimeZone(zone)).toBe(false);
  });
});
