import { formatPath } from '../../../common/shape/path.util';
import { canonicalMapping, mappingProblems, parameterProblems, severityFor } from './script-shape.util';

describe('exit code severity mapping', () => {
  it('accepts single codes and ranges that do not overlap', () => {
    expect(mappingProblems([{ exitCode: 0, severity: 'success' }, { from: 1, to: 9, severity: 'warning' }, { exitCode: 3221225477, severity: 'critical' }])).toEqual([]);
  });

  it('names the entry that overlaps an earlier one', () => {
    expect(mappingProblems([{ from: 1, to: 10, severity: 'warning' }, { exitCode: 10, severity: 'error' }])).toEqual([[[1], expect.stringContaining('overlap entry 0')]]);
    expect(mappingProblems([{ exitCode: 2, severity: 'error' }, { exitCode: 2, severity: 'info' }])).toHaveLength(1);
  });

  it('refuses unknown severities, codes beyond 32 bits, non-integers, inverted ranges and mixed forms', () => {
    expect(mappingProblems([{ exitCode: 1, severity: 'fatal' }])).toEqual([[[0, 'severity'], expect.any(String)]]);
    expect(mappingProblems([{ exitCode: 4294967295, severity: 'error' }])).toEqual([]);
    expect(mappingProblems([{ exitCode: 4294967296, severity: 'error' }])).toEqual([[[0, 'exitCode'], expect.any(String)]]);
    expect(mappingProblems([{ exitCode: -2147483649, severity: 'error' }])).toEqual([[[0, 'exitCode'], expect.any(String)]]);
    expect(mappingProblems([{ exitCode: 1.5, severity: 'error' }])).toEqual([[[0, 'exitCode'], expect.any(String)]]);
    expect(mappingProblems([{ from: 5, to: 1, severity: 'error' }])).toEqual([[[0, 'from'], expect.any(String)]]);
    expect(mappingProblems([{ exitCode: 1, from: 1, to: 2, severity: 'error' }])).toEqual([[[0], expect.any(String)]]);
    expect(mappingProblems([{ from: 1, severity: 'error' }])).toEqual([[[0, 'to'], expect.any(String)]]);
    expect(mappingProblems([{ exitCode: 1, severity: 'error', colour: 'red' }])).toEqual([[[0, 'colour'], expect.any(String)]]);
  });

  it('accepts 100 entries and refuses 101', () => {
    const entries = (n: number) => Array.from({ length: n }, (_, i) => ({ exitCode: i, severity: 'info' }));
    expect(mappingProblems(entries(100))).toEqual([]);
    expect(mappingProblems(entries(101))).toEqual([[[], expect.any(String)]]);
  });

  it('resolves a severity, defaulting to success for 0 and error otherwise', () => {
    const m = canonicalMapping([{ from: 1, to: 9, severity: 'warning' }, { exitCode: 0, severity: 'info' }]);
    expect(severityFor(m, 0)).toBe('info');
    expect(severityFor(m, 9)).toBe('warning');
    expect(severityFor(m, 10)).toBe('error');
    expect(severityFor([], 0)).toBe('success');
  });
});

describe('script parameters', () => {
  it('accepts typed parameters with matching defaults', () => {
    expect(parameterProblems([{ name: 'Path', type: 'string', required: true }, { name: 'retries', type: 'number', default: 3 }, { name: 'force', type: 'boolean', default: false }])).toEqual([]);
  });

  it('refuses duplicate names, bad names, mismatched or pointless defaults and defaults of secrets', () => {
    expect(parameterProblems([{ name: 'a', type: 'string' }, { name: 'A', type: 'string' }])).toEqual([[[1, 'name'], expect.any(String)]]);
    expect(parameterProblems([{ name: '1a', type: 'string' }])).toEqual([[[0, 'name'], expect.any(String)]]);
    expect(parameterProblems([{ name: 'n', type: 'number', default: '3' }])).toEqual([[[0, 'default'], expect.any(String)]]);
    expect(parameterProblems([{ name: 'n', type: 'string', required: true, default: 'x' }])).toEqual([[[0, 'default'], expect.any(String)]]);
    expect(parameterProblems([{ name: 'token', type: 'secret', default: 'hunter2' }])).toEqual([[[0, 'default'], expect.any(String)]]);
    expect(parameterProblems([{ name: 'n', type: 'date' }])).toEqual([[[0, 'type'], expect.any(String)]]);
  });
});

describe('paths', () => {
  it('formats paths for documents and for API bodies', () => {
    expect(formatPath(['customers', 2, 'locations', 0, 'name'], 'brackets')).toBe('customers[2].locations[0].name');
    expect(formatPath(['exitCodeSeverityMapping', 1, 'exitCode'], 'dots')).toBe('exitCodeSeverityMapping.1.exitCode');
    expect(formatPath([], 'dots')).toBe('');
  });
});
