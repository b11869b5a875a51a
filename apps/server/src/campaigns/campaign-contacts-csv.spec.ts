import { parseContactsCsv } from './campaign-contacts-csv';

describe('parseContactsCsv', () => {
  it('reads a header of to, timeZone and variables, then one contact per row (quoted commas, empty zone: default)', () => {
    const { contacts, issues } = parseContactsCsv('to,timeZone,name,order\n+15551230001,Europe/Paris,"Ada, Countess",4567\n\n+15551230002,,Bob,\n');
    expect(issues).toEqual([]);
    expect(contacts).toEqual([
      { field: 'contactsCsv.2', contact: { to: '+15551230001', timeZone: 'Europe/Paris', variables: { name: 'Ada, Countess', order: '4567' } } },
      { field: 'contactsCsv.4', contact: { to: '+15551230002', variables: { name: 'Bob', order: '' } } },
    ]);
  });

  it('names the line and column of every bad cell', () => {
    const { issues } = parseContactsCsv('to,timeZone,name\n+15551230001,Mars/Olympus,Ada\n5550100,UTC,Bob\n');
    expect(issues.map((issue) => issue.field)).toEqual(['contactsCsv.2.timeZone', 'contactsCsv.3.to']);
    expect(issues[0]?.message).toMatch(/^line 2: must be an IANA time zone/);
  });

  it('refuses a header without "to", a column that is not a variable name, and a row of the wrong length', () => {
    expect(parseContactsCsv('number,name\n+15551230001,Ada\n').issues[0]).toMatchObject({ field: 'contactsCsv.1' });
    expect(parseContactsCsv('to,first name\n+15551230001,Ada\n').issues[0]?.message).toContain('"first name"');
    expect(parseContactsCsv('to,name\n+15551230001,Ada,extra\n').issues[0]).toMatchObject({ field: 'contactsCsv.2', rule: 'csv' });
    expect(parseContactsCsv('to,name\n"+15551230001,Ada\n').issues[0]).toMatchObject({ rule: 'csv' });
    expect(parseContactsCsv('to\n').issues[0]).toMatchObject({ field: 'contactsCsv', rule: 'too_small' });
  });

  it('refuses more than 10 000 rows', () => {
    const rows = Array.from({ length: 10_001 }, (_, index) => `+1555${String(index).padStart(7, '0')}`);
    expect(parseContactsCsv(`to\n${rows.join('\n')}\n`).issues).toEqual([{ field: 'contactsCsv', rule: 'too_big', message: 'at most 10000 contact rows' }]);
  });
});
