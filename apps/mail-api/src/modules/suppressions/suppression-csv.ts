import { StringDecoder } from 'node:string_decoder';

/**
 * A streaming RFC 4180 reader: fields separated by commas, records by CRLF or LF, fields optionally in
 * double quotes (a quote inside doubled, commas and line breaks allowed inside). One pass over each
 * character, no regular expression and no buffering beyond the current record, so a file of a million
 * rows costs its own size in time and one batch in memory. A record longer than `maxRecordChars` is
 * cut there (its address can no longer be valid), so a file without line breaks cannot grow memory.
 */
export async function* csvRecordBatches(
  chunks: AsyncIterable<Buffer | string> | Iterable<Buffer | string>,
  options: { batchSize: number; maxRecordChars: number },
): AsyncGenerator<string[][]> {
  const decoder = new StringDecoder('utf8');
  let batch: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let quoteSeen = false; // the previous character closed a quoted part (or is the first of a doubled quote)
  let recordChars = 0;
  let fieldStarted = false;

  const endField = () => {
    record.push(field);
    field = '';
    fieldStarted = false;
  };
  const endRecord = () => {
    endField();
    if (!(record.length === 1 && record[0] === '')) batch.push(record);
    record = [];
    recordChars = 0;
  };

  const consume = (text: string): void => {
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (quoted) {
        if (quoteSeen) {
          quoteSeen = false;
          if (c === '"') {
            field += '"';
            continue;
          }
          quoted = false; // the quote before closed the field; this character is read outside quotes
        } else if (c === '"') {
          quoteSeen = true;
          continue;
        } else {
          if (recordChars++ < options.maxRecordChars) field += c;
          continue;
        }
      }
      if (c === ',') endField();
      else if (c === '\n') endRecord();
      else if (c === '\r') continue;
      else if (c === '"' && !fieldStarted) {
        quoted = true;
        fieldStarted = true;
      } else {
        fieldStarted = true;
        if (recordChars++ < options.maxRecordChars) field += c;
      }
    }
  };

  for await (const chunk of chunks) {
    consume(typeof chunk === 'string' ? chunk : decoder.write(chunk));
    if (batch.length >= options.batchSize) {
      yield batch;
      batch = [];
    }
  }
  consume(decoder.end());
  if (quoted && quoteSeen) quoted = false;
  if (field !== '' || record.length > 0) endRecord();
  if (batch.length > 0) yield batch;
}
