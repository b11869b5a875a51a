import { describe, expect, it } from '@jest/globals';
import { campaignBody, csvProblemText, formFieldOf, formFieldOfCode, initialCampaignForm, windowsText, zonedTimeToIso } from './campaign-form';

describe('the new-campaign form model', () => {
  it('reads a start date as wall-clock time in the schedule time zone, daylight saving included', () => {
    expect(zonedTimeToIso('2027-01-04T09:00', 'Europe/Paris')).toBe('2027-01-04T08:00:00.000Z');
    expect(zonedTimeToIso('2027-07-05T09:00', 'Europe/Paris')).toBe('2027-07-05T07:00:00.000Z');
    expect(zonedTimeToIso('2027-07-05T09:00', 'America/New_York')).toBe('2027-07-05T13:00:00.000Z');
    expect(zonedTimeToIso('2027-01-04T00:00', 'UTC')).toBe('2027-01-04T00:00:00.000Z');
    // 02:30 does not exist in Paris on 28 March 2027: the clock reads 03:30 CEST then.
    expect(zonedTimeToIso('2027-03-28T02:30', 'Europe/Paris')).toBe('2027-03-28T01:30:00.000Z');
    expect(zonedTimeToIso('2027-01-04T09:00', 'Mars/Olympus')).toBeUndefined();
    expect(zonedTimeToIso('tomorrow', 'UTC')).toBeUndefined();
  });

  it('sends the checked days only, numbers as numbers, and the voicemail choice as the API reads it', () => {
    const form = { ...initialCampaignForm('UTC'), name: 'Reminders', agentId: 'a', from: '+15551230000', contactsCsv: 'to\n+15551230001', maxAttempts: '5', start: '2027-01-04T09:00' };
    form.windows = { ...form.windows, tue: { ...form.windows.tue, enabled: false }, sat: { enabled: true, from: '10:00', to: '12:00' } };
    const made = campaignBody({ ...form, voicemailMode: 'none' });
    expect('body' in made && made.body).toMatchObject({
      schedule: { timeZone: 'UTC', start: '2027-01-04T09:00:00.000Z', windows: { mon: [{ from: '09:00', to: '17:00' }], sat: [{ from: '10:00', to: '12:00' }] } },
      maxConcurrentCalls: 1,
      retry: { onBusy: true, onNoAnswer: true, onVoicemail: false, maxAttempts: 5, delaySeconds: 3600 },
      voicemail: null,
    });
    expect('body' in made && Object.keys(made.body.schedule as object)).not.toContain('end');
    expect('body' in made && Object.keys((made.body.schedule as { windows: object }).windows)).toEqual(['mon', 'wed', 'thu', 'fri', 'sat']);
    const agentDefault = campaignBody(form);
    expect('body' in agentDefault && 'voicemail' in agentDefault.body).toBe(false);
    // A value that is not a number goes as typed: the server names the rule at its field.
    const typo = campaignBody({ ...form, maxConcurrentCalls: 'three' });
    expect('body' in typo && typo.body.maxConcurrentCalls).toBe('three');
  });

  it('stops before sending when a choice is missing or a date cannot be read in the zone', () => {
    const made = campaignBody({ ...initialCampaignForm('Nowhere/Land'), start: '2027-01-04T09:00' });
    expect('problems' in made && made.problems.map((problem) => problem.field)).toEqual(['agentId', 'from', 'contactsCsv', 'schedule.start']);
  });

  it('shows each server problem at the field it names, or in the alert', () => {
    expect(formFieldOf('contactsCsv.4.to')).toBe('contactsCsv');
    expect(formFieldOf('contactsCsv.1')).toBe('contactsCsv');
    expect(formFieldOf('contacts')).toBe('contactsCsv');
    expect(formFieldOf('schedule.windows.mon.0.to')).toBe('schedule.windows.mon');
    expect(formFieldOf('schedule.windows')).toBe('schedule.windows');
    expect(formFieldOf('schedule.timeZone')).toBe('schedule.timeZone');
    expect(formFieldOf('retry.maxAttempts')).toBe('retry.maxAttempts');
    expect(formFieldOf('voicemail.message')).toBe('voicemail');
    expect(formFieldOf('maxConcurrentCalls')).toBe('maxConcurrentCalls');
    expect(formFieldOf('')).toBeUndefined();
    expect(formFieldOf('surprise')).toBeUndefined();
    expect(formFieldOfCode('agent_not_found')).toBe('agentId');
    expect(formFieldOfCode('voicemail_needs_detect_message_end')).toBe('voicemail');
    expect(formFieldOfCode('twilio_not_configured')).toBeUndefined();
  });

  it('lists a CSV problem by its line, with the line', () => {
    const csv = 'to,timeZone,name\r\n+15551230001,,Ada\r\n555-0100,,Bob\r\n';
    expect(csvProblemText({ field: 'contactsCsv.3.to', rule: 'custom', message: 'line 3: must be an E.164 number, e.g. +14155550100' }, csv)).toEqual({
      text: 'Line 3, column to: must be an E.164 number, e.g. +14155550100',
      line: '555-0100,,Bob',
    });
    expect(csvProblemText({ field: 'contactsCsv.2.variables.name', rule: 'too_big', message: 'line 2: too long' }, csv).text).toBe('Line 2, column name: too long');
    expect(csvProblemText({ field: 'contactsCsv', rule: 'too_small', message: 'needs a header row and at least one contact row' }, csv)).toEqual({ text: 'needs a header row and at least one contact row' });
  });

  it('summarises calling windows', () => {
    expect(windowsText({ mon: [{ from: '09:00', to: '17:00' }], wed: [{ from: '10:00', to: '12:00' }, { from: '14:00', to: '18:00' }], sun: [] })).toBe('Mon 09:00–17:00 · Wed 10:00–12:00, 14:00–18:00');
    expect(windowsText({})).toBe('none');
  });
});
