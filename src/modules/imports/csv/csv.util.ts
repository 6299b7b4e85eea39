/**
 * RFC 4180 CSV: comma-separated, fields optionally in double quotes (a quote inside doubled),
 * quoted fields may span lines, CRLF or LF line ends, an optional UTF-8 byte-order mark.
 * Returns rows of fields, with the 1-based line each row starts on.
 */
export class CsvError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

export interface CsvRow {
  line: number;
  fields: string[];
}

export function parseCsv(text: string): CsvRow[] {
  const rows: CsvRow[] = [];
  let fields: string[] = [];
  let field = '';
  let line = 1;
  let rowLine = 1;
  let quoted = false;
  let fieldStarted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endField = () => {
    fields.push(field);
    field = '';
    fieldStarted = false;
  };
  const endRow = () => {
    endField();
    // A blank line is not a row.
    if (!(fields.length === 1 && fields[0] === '')) rows.push({ line: rowLine, fields });
    fields = [];
  };
  for (; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (ch === '\n') line++;
        field += ch;
      }
      continue;
    }
    if (ch === '"') {
      if (fieldStarted) throw new CsvError('a quote may only start a field', line);
      quoted = true;
      fieldStarted = true;
    } else if (ch === ',') endField();
    else if (ch === '\r' || ch === '\n') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      endRow();
      line++;
      rowLine = line;
    } else {
      if (fieldStarted && field.length > 0 && text[i - 1] === '"') throw new CsvError('text after a closing quote', line);
      field += ch;
      fieldStarted = true;
    }
  }
  if (quoted) throw new CsvError('a quoted field is not closed', rowLine);
  if (fieldStarted || fields.length) endRow();
  return rows;
}

/**
 * Rows as records keyed by the header row (header names trimmed, matched case-insensitively by
 * the caller). A row with the wrong number of fields is named in `problems` and left out, so the
 * caller can go on to name the problems of every other row too.
 */
export function csvRecords(text: string): { header: string[]; records: { line: number; values: Record<string, string> }[]; problems: CsvError[] } {
  const [head, ...rest] = parseCsv(text);
  if (!head) return { header: [], records: [], problems: [] };
  const header = head.fields.map((h) => h.trim());
  const problems: CsvError[] = [];
  const records: { line: number; values: Record<string, string> }[] = [];
  for (const r of rest) {
    if (r.fields.length !== header.length) problems.push(new CsvError(`expected ${header.length} fields, found ${r.fields.length}`, r.line));
    else records.push({ line: r.line, values: Object.fromEntries(header.map((h, i) => [h, r.fields[i]])) });
  }
  return { header, records, problems };
}
