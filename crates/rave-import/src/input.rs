//! Reading a CSV export: the byte order mark, the separator (detected from
//! the header line), the header mapped to fields, then one comment per
//! record, each with its line.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};

use rave_comments::{ImportComment, ProductId, Source};

use crate::error::{ImportError, RowError};
use crate::options::Options;
use crate::row::{BySku, Columns, comment_of};

/// How much of the file the separator is detected from: the header line
/// must fit (a header wider than this is read with `,`).
const PEEK: usize = 64 * 1024;
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// One row read as a comment, with the line its record starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportRow {
    pub line: u64,
    /// Its product and id are not set yet while [`ImportRow::sku_to_resolve`]
    /// names a SKU: the runner sets them from the product records.
    pub comment: ImportComment,
    by_sku: Option<BySku>,
}

impl ImportRow {
    /// A row whose comment is complete (product and id set).
    pub fn new(line: u64, comment: ImportComment) -> ImportRow {
        ImportRow {
            line,
            comment,
            by_sku: None,
        }
    }

    /// The SKU whose product record names this row's product, when neither
    /// the product map nor the row's product id or handle did.
    pub fn sku_to_resolve(&self) -> Option<&str> {
        self.by_sku.as_ref().map(|by_sku| by_sku.sku.as_str())
    }

    /// The row with its product: `product` is the one whose record lists
    /// the row's SKU (none: the row's error names what it gave).
    pub(crate) fn resolved(mut self, product: Option<&ProductId>) -> Result<ImportRow, RowError> {
        if let Some(by_sku) = self.by_sku.take() {
            by_sku.resolve(&mut self.comment, product, self.line)?;
        }
        Ok(self)
    }
}

/// The rows of a CSV export, in file order: each a comment or the reason
/// it cannot be one. A row's error does not end the reading.
#[derive(Debug)]
pub struct CsvImport<R: Read> {
    records: csv::Reader<BufReader<Lines<R>>>,
    /// Bytes before the records' byte 0 (a byte order mark).
    skipped: u64,
    columns: Columns,
    options: Options,
    source: Source,
}

impl<R: Read> CsvImport<R> {
    /// Reads the header of `input` and checks that the mapping finds every
    /// field a comment needs.
    pub fn new(input: R, options: Options) -> Result<CsvImport<R>, ImportError> {
        let mut input = BufReader::with_capacity(PEEK, Lines::new(input));
        let start = input
            .fill_buf()
            .map_err(|e| ImportError::Header(e.to_string()))?;
        let bom = start.starts_with(UTF8_BOM);
        let delimiter = detect_delimiter(if bom { &start[UTF8_BOM.len()..] } else { start });
        if bom {
            input.consume(UTF8_BOM.len());
        }
        let mut records = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .flexible(true)
            .from_reader(input);
        let header = records
            .headers()
            .map_err(|e| ImportError::Header(e.to_string()))?;
        let columns = Columns::resolve(header, &options.mapping)?;
        let source = Source::parse(&options.mapping.source)
            .map_err(|e| ImportError::Mapping(e.to_string()))?;
        Ok(CsvImport {
            records,
            skipped: if bom { UTF8_BOM.len() as u64 } else { 0 },
            columns,
            options,
            source,
        })
    }

    /// The physical line (from 1) of the record starting at `byte` of the
    /// records: every newline before it counts, those inside quoted cells
    /// too (the CSV reader counts records' lines, not the file's).
    fn line_at(&mut self, byte: u64) -> u64 {
        self.records
            .get_mut()
            .get_mut()
            .line_at(byte + self.skipped)
    }

    /// How far into the input the reading is, in bytes (for progress).
    pub fn bytes_read(&self) -> u64 {
        self.records.position().byte()
    }
}

impl<R: Read> Iterator for CsvImport<R> {
    type Item = Result<ImportRow, RowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut record = csv::StringRecord::new();
        match self.records.read_record(&mut record) {
            Ok(false) => None,
            Ok(true) => {
                let byte = record.position().map_or(0, csv::Position::byte);
                let line = self.line_at(byte);
                Some(
                    comment_of(&record, &self.columns, &self.options, &self.source, line).map(
                        |(comment, by_sku)| ImportRow {
                            line,
                            comment,
                            by_sku,
                        },
                    ),
                )
            }
            Err(error) => Some(Err(RowError {
                line: {
                    let byte = error
                        .position()
                        .map_or(self.records.position().byte(), csv::Position::byte);
                    self.line_at(byte)
                },
                field: None,
                reason: match error.kind() {
                    csv::ErrorKind::Utf8 { .. } => "the row is not UTF-8 text".to_owned(),
                    _ => error.to_string(),
                },
            })),
        }
    }
}

/// The input, noting where its newlines are until the lines before them
/// are counted: the reader reads ahead of the records by at most its
/// buffer, so the noted offsets stay few.
#[derive(Debug)]
struct Lines<R> {
    inner: R,
    offset: u64,
    newlines: VecDeque<u64>,
    /// Newlines before the last record asked about.
    counted: u64,
}

impl<R> Lines<R> {
    fn new(inner: R) -> Lines<R> {
        Lines {
            inner,
            offset: 0,
            newlines: VecDeque::new(),
            counted: 0,
        }
    }

    /// Records are asked about in file order, so the newlines before one
    /// are counted once and forgotten. A record after a CRLF starts, as the
    /// CSV reader counts, at the CRLF's `\n`, which ends the line before.
    fn line_at(&mut self, byte: u64) -> u64 {
        while self.newlines.front().is_some_and(|&at| at <= byte) {
            self.newlines.pop_front();
            self.counted += 1;
        }
        self.counted + 1
    }
}

impl<R: Read> Read for Lines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        for (at, _) in buf[..read].iter().enumerate().filter(|(_, b)| **b == b'\n') {
            self.newlines.push_back(self.offset + at as u64);
        }
        self.offset += read as u64;
        Ok(read)
    }
}

/// The separator of the header line: whichever of `,` `;` and tab occurs
/// most often outside quotes (spreadsheets in many locales write `;`);
/// `,` when none does.
fn detect_delimiter(start: &[u8]) -> u8 {
    let mut counts = [(b',', 0usize), (b';', 0), (b'\t', 0)];
    let mut quoted = false;
    for &byte in start {
        match byte {
            b'"' => quoted = !quoted,
            b'\n' | b'\r' if !quoted => break,
            _ if !quoted => {
                if let Some(count) = counts.iter_mut().find(|(d, _)| *d == byte) {
                    count.1 += 1;
                }
            }
            _ => {}
        }
    }
    counts
        .iter()
        .max_by_key(|(delimiter, count)| (*count, *delimiter == b','))
        .filter(|(_, count)| *count > 0)
        .map_or(b',', |(delimiter, _)| *delimiter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_separator_is_the_header_lines_most_frequent_outside_quotes() {
        assert_eq!(detect_delimiter(b"a,b,c\n1;2;3;4;5"), b',');
        assert_eq!(detect_delimiter(b"a;b;\"c,d,e\"\r\n"), b';');
        assert_eq!(detect_delimiter(b"a\tb\tc"), b'\t');
        assert_eq!(detect_delimiter(b"only"), b',');
    }
}
