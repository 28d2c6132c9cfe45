//! The block index: where each block of the conversation is in the
//! journal's bytes, built a line at a time so a viewer can show the first
//! screen of a 100 MB journal before it has read the rest. An item holds
//! only positions and the few facts the gutter and the fold defaults need;
//! its text is decoded again when it is shown (`block`).

use super::shown::Shown;
use journal::lines::split;
use journal::record::{Block, Payload, Record};
use std::collections::HashSet;

/// What a block is: it decides the label, whether it starts folded, and
/// how its text is decoded from its record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The meta record's prompt.
    Prompt,
    /// A text block of a user record (a prompt given on resume).
    UserText,
    Thinking,
    Text,
    ToolUse,
    /// A tool_result block inside a message.
    ResultBlock,
    Provider,
    OtherBlock,
    ToolResult,
    /// A tool_result for a call deferred earlier: an answer given later,
    /// usually by hand.
    Answer,
    Deferred,
    CallApproval,
    Decision,
    Claim,
    Terminal,
    Memory,
    /// An unknown record the reader skips (it says `optional`).
    Skipped,
    /// A record the reader refuses: unknown and not optional, or a known
    /// protocol without its payload.
    Refused,
    /// A line that does not decode before the last.
    Unreadable,
    /// A final line that does not decode: readers drop it.
    Torn,
    /// Records missing before the next one: a gap in the seqs (the
    /// item's `seq` is the first missing, its `part` how many).
    Gap,
    /// The closing section: index into [`Transcript::end`].
    End,
}

impl Kind {
    /// Thinking and tool output start folded in the viewer.
    pub fn folded_by_default(self) -> bool {
        matches!(
            self,
            Kind::Thinking | Kind::ToolResult | Kind::Answer | Kind::ResultBlock
        )
    }
}

/// One block: which line holds it, which part of that record it is.
#[derive(Clone, Copy, Debug)]
pub struct Item {
    /// Index into the journal's lines (or into `end` for [`Kind::End`]).
    pub line: u32,
    /// The block's position in its record's message.
    pub part: u32,
    pub kind: Kind,
    /// 0 when the line does not decode.
    pub seq: u64,
    /// The iteration of the turn the block belongs to.
    pub iteration: Option<i64>,
}

#[derive(Clone, Copy, Debug)]
struct Span {
    start: usize,
    end: usize,
    /// 1-based line number in the journal.
    number: usize,
}

/// A run's journal bytes and the index over them, built on demand.
pub struct Transcript {
    pub run: String,
    bytes: Vec<u8>,
    lines: Vec<Span>,
    next: usize,
    items: Vec<Item>,
    deferred: HashSet<String>,
    iteration: Option<i64>,
    /// Line numbers of the interior lines a reader refuses.
    refused: Vec<usize>,
    /// The last seq indexed, and the records found missing so far.
    last_seq: u64,
    lost: u64,
    /// The command that checks this run (with the store flags), named
    /// when a line is refused.
    pub verify_hint: String,
    /// The command that cuts a torn final line (with the store flags);
    /// empty for a journal file, which no store repairs.
    pub repair_hint: String,
    /// The closing section, appended as items once every line is indexed.
    pub end: Vec<Shown>,
    /// The run is being followed (`show --follow`): lines are still to
    /// come ([`append`](Transcript::append)), so the closing section waits
    /// for [`close`](Transcript::close).
    open: bool,
    /// `show --transcript --find RE`: the viewer opens on its first match;
    /// line mode prints only the blocks that match (and the end).
    pub find: Option<(String, regex::Regex)>,
    /// `show --follow`: a time before each record (its own, else when it
    /// arrived: [`append_at`](Transcript::append_at)).
    pub times: bool,
    /// When each line appended while following arrived, by line index.
    arrived: std::collections::HashMap<usize, journal::time::Time>,
    /// Who wrote a record by hand, by seq, as the audit log says
    /// ("answered by alice at T: why", issue 38): shown beside it.
    pub by_hand: std::collections::HashMap<u64, String>,
}

impl Transcript {
    /// Split `bytes` into lines (cheap: one memchr pass); nothing is
    /// decoded yet. Blank lines are skipped, as readers skip them.
    /// The transcript of `run`; its hints carry `g`'s store flags.
    pub fn new(
        g: &crate::invocation::Invocation,
        run: &str,
        bytes: Vec<u8>,
        end: Vec<Shown>,
    ) -> Self {
        let lines = split(&bytes)
            .filter(|l| !l.bytes.iter().all(u8::is_ascii_whitespace))
            .map(|l| Span {
                start: l.offset as usize,
                end: l.offset as usize + l.bytes.len(),
                number: l.line,
            })
            .collect();
        Transcript {
            run: run.to_owned(),
            bytes,
            lines,
            next: 0,
            items: Vec::new(),
            deferred: HashSet::new(),
            iteration: None,
            refused: Vec::new(),
            last_seq: 0,
            lost: 0,
            verify_hint: crate::hint::command(g, &["verify", run]),
            repair_hint: crate::hint::command(g, &["repair", run]),
            end,
            open: false,
            find: None,
            times: false,
            arrived: std::collections::HashMap::new(),
            by_hand: Default::default(),
        }
    }

    /// This transcript, followed: the lines appended later belong to it,
    /// and it ends when it is [`close`](Self::close)d.
    pub fn following(mut self) -> Self {
        self.open = true;
        self
    }

    /// Add one record's line (as stored, without `\n`) at the end.
    pub fn append(&mut self, line: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(line);
        self.bytes.push(b'\n');
        let number = self.lines.last().map_or(1, |s| s.number + 1);
        self.lines.push(Span {
            start,
            end: start + line.len(),
            number,
        });
    }

    /// [`append`](Transcript::append), saying when the line arrived (the
    /// time a record without its own is shown with).
    pub fn append_at(&mut self, line: &[u8], at: journal::time::Time) {
        self.arrived.insert(self.lines.len(), at);
        self.append(line);
    }

    /// The time of line `i`'s record as `show --follow` shows it: its own
    /// `time`, else when it arrived while followed; `None` for neither.
    pub fn time_of(&self, i: usize, record: Option<&Record>) -> Option<journal::time::Time> {
        record
            .and_then(|r| r.time)
            .filter(|t| !t.is_zero())
            .or_else(|| self.arrived.get(&i).copied())
    }

    /// Nothing more is appended: `end` is the closing section, indexed
    /// after the last line.
    pub fn close(&mut self, end: Vec<Shown>) {
        self.open = false;
        self.end = end;
    }

    /// The journal's bytes so far.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The transcript of a journal file read with no store (`--file
    /// PATH`): the check names the file; no store's repair cuts its torn
    /// line (the copy is the operator's to fix).
    pub fn of_file(mut self, path: &std::path::Path) -> Self {
        self.verify_hint = crate::hint::on_file(&["verify"], path);
        self.repair_hint = String::new();
        self
    }

    pub fn items(&self) -> &[Item] {
        &self.items
    }

    pub fn item(&self, i: usize) -> Option<&Item> {
        self.items.get(i)
    }

    /// Whether every line is indexed (and the closing section appended);
    /// for a transcript followed, every line there is now.
    pub fn done(&self) -> bool {
        self.next > self.lines.len() || (self.open && self.next == self.lines.len())
    }

    /// How far the index has read, in per cent of the bytes.
    pub fn percent(&self) -> u64 {
        let read = self
            .lines
            .get(self.next)
            .map_or(self.bytes.len(), |s| s.start);
        (read as u64 * 100)
            .checked_div(self.bytes.len() as u64)
            .unwrap_or(100)
    }

    /// The raw bytes of line `i` and its 1-based number and byte offset.
    pub fn line(&self, i: usize) -> Option<(&[u8], usize, usize)> {
        let s = self.lines.get(i)?;
        Some((self.bytes.get(s.start..s.end)?, s.number, s.start))
    }

    /// Whether line `i` is the journal's last.
    pub fn is_last_line(&self, i: usize) -> bool {
        i + 1 == self.lines.len()
    }

    /// Index up to `n` more lines; true when there may be more.
    pub fn advance(&mut self, n: usize) -> bool {
        for _ in 0..n {
            if self.advance_line().is_none() {
                return false;
            }
        }
        !self.done()
    }

    /// Index until there are more than `want` items or nothing is left.
    pub fn ensure(&mut self, want: usize) {
        while self.items.len() <= want && self.advance_line().is_some() {}
    }

    /// Index everything.
    pub fn finish(&mut self) {
        while self.advance_line().is_some() {}
    }

    /// Index one line; its decoded record (for a caller that prints it
    /// now) and the range of items it added. `None` when all is indexed.
    pub fn advance_line(&mut self) -> Option<(Option<Record>, std::ops::Range<usize>)> {
        let first = self.items.len();
        let i = self.next;
        if i > self.lines.len() || (self.open && i == self.lines.len()) {
            return None;
        }
        self.next += 1;
        if i == self.lines.len() {
            self.iteration = None;
            if let Some(first) = self.refused.first() {
                let note = Shown::new(
                    format!(
                        "[readers refuse this journal: {} line(s) marked above, the first at line {first}]",
                        self.refused.len()
                    ),
                    vec![format!(
                        "the status below is read from the tail; {} says more",
                        self.verify_hint
                    )],
                );
                self.end.insert(0, note);
            }
            if self.lost > 0 {
                let note = Shown::new(
                    format!(
                        "[{} record(s) lost: the seqs have gaps, marked above]",
                        self.lost
                    ),
                    vec![format!(
                        "the agent reads the rest; what the lost records said is not in the status below; {} says more",
                        self.verify_hint
                    )],
                );
                self.end.insert(0, note);
            }
            for n in 0..self.end.len() {
                self.push(n, 0, Kind::End, 0);
            }
            return Some((None, first..self.items.len()));
        }
        let (bytes, _, _) = self.line(i)?;
        let record = match Record::decode(bytes) {
            Ok(r) => r,
            Err(_) => {
                let kind = if self.is_last_line(i) {
                    Kind::Torn
                } else {
                    let number = self.lines.get(i).map_or(0, |s| s.number);
                    self.refused.push(number);
                    Kind::Unreadable
                };
                self.push(i, 0, kind, 0);
                return Some((None, first..self.items.len()));
            }
        };
        self.index_record(i, &record);
        Some((Some(record), first..self.items.len()))
    }

    fn push(&mut self, line: usize, part: usize, kind: Kind, seq: u64) {
        self.items.push(Item {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            part: u32::try_from(part).unwrap_or(u32::MAX),
            kind,
            seq,
            iteration: self.iteration,
        });
    }

    fn index_record(&mut self, i: usize, r: &Record) {
        let seq = r.seq;
        // Records lost between the last seq and this one: marked where
        // they were (a seq out of order is verify's to name).
        if self.last_seq > 0 && seq > self.last_seq.saturating_add(1) {
            let missing = seq - self.last_seq - 1;
            self.lost = self.lost.saturating_add(missing);
            let first = self.last_seq + 1;
            self.push(
                i,
                usize::try_from(missing).unwrap_or(usize::MAX),
                Kind::Gap,
                first,
            );
        }
        self.last_seq = self.last_seq.max(seq);
        let Some(p) = &r.payload else {
            let kind = if r.optional {
                Kind::Skipped
            } else {
                let number = self.lines.get(i).map_or(0, |s| s.number);
                self.refused.push(number);
                Kind::Refused
            };
            self.push(i, 0, kind, seq);
            return;
        };
        match p {
            Payload::Meta(_) => self.push(i, 0, Kind::Prompt, seq),
            Payload::Assistant(a) => {
                self.iteration = Some(a.iteration);
                if a.message.blocks().is_empty() {
                    self.push(i, 0, Kind::Text, seq);
                }
                for (n, b) in a.message.blocks().iter().enumerate() {
                    self.push(i, n, block_kind(b, false), seq);
                }
            }
            Payload::User(u) => {
                if u.message.blocks().is_empty() {
                    self.push(i, 0, Kind::UserText, seq);
                }
                for (n, b) in u.message.blocks().iter().enumerate() {
                    self.push(i, n, block_kind(b, true), seq);
                }
            }
            Payload::ToolResult(t) => {
                let kind = if self.deferred.contains(&t.tool_use_id) {
                    Kind::Answer
                } else {
                    Kind::ToolResult
                };
                self.push(i, 0, kind, seq);
            }
            Payload::Deferred(d) => {
                self.deferred.insert(d.tool_use_id.clone());
                self.push(i, 0, Kind::Deferred, seq);
            }
            Payload::Decision(_) => self.push(i, 0, Kind::Decision, seq),
            Payload::CallApproval(_) => self.push(i, 0, Kind::CallApproval, seq),
            Payload::MemoryRevisions(_) => self.push(i, 0, Kind::Memory, seq),
            Payload::Terminal(_) => self.push(i, 0, Kind::Terminal, seq),
            Payload::Claim(_) => self.push(i, 0, Kind::Claim, seq),
            // A kind a newer library decodes: shown as a skipped record.
            _ => self.push(i, 0, Kind::Skipped, seq),
        }
    }
}

fn block_kind(b: &Block, user: bool) -> Kind {
    match b {
        Block::Text(_) if user => Kind::UserText,
        Block::Text(_) => Kind::Text,
        Block::Thinking(_) => Kind::Thinking,
        Block::ToolUse(_) => Kind::ToolUse,
        Block::ToolResult(_) => Kind::ResultBlock,
        Block::Provider(_) => Kind::Provider,
        Block::Other(_) => Kind::OtherBlock,
        // A block a newer library decodes: as one of another shape.
        _ => Kind::OtherBlock,
    }
}
