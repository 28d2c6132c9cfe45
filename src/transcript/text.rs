//! Line mode: the transcript as labelled text, one record after another,
//! decoded once each and printed as it is read (`show --transcript
//! --no-tui`, or any output that is not a terminal). With colour (`--color
//! always`, or auto on a terminal; the pager is then told `-R`) labels are
//! coloured as the viewer colours them and headings are bold: those codes
//! are the only escape sequences written, every piece of journal text in a
//! label or body having been neutralised when its block was shown.

use super::block::shown;
use super::hue::Hue;
use super::index::{Item, Kind, Transcript};
use super::shown::Shown;
use journal::record::{Payload, Record};
use std::io::{self, Write};

/// Print every block of `t`; thinking only with `thinking`; labels and
/// headings coloured with `color`.
pub fn print(
    t: &mut Transcript,
    thinking: bool,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    header(t, out)?;
    more(t, thinking, color, out)
}

/// The transcript's first line.
pub fn header(t: &Transcript, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "Transcript of {} (seq, iteration and label on each record)",
        // A journal file's id is its meta record's: not checked.
        crate::output::sanitize(&t.run, false)
    )
}

/// Print the blocks of `t` not printed yet (a followed transcript grows
/// between two calls); coloured as [`print`](fn@print) colours them.
pub fn more(
    t: &mut Transcript,
    thinking: bool,
    color: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut closing = false;
    while let Some((record, range)) = t.advance_line() {
        let mut items: Vec<Item> = t.items().get(range).unwrap_or_default().to_vec();
        // The records lost before this one, marked where they were.
        while let Some(gap) = items.first().filter(|it| it.kind == Kind::Gap).copied() {
            writeln!(out)?;
            block(out, &shown(t, &gap, None), gap.kind, color, "", "    ")?;
            items.remove(0);
        }
        // `--find`: only the blocks that match (the end always).
        if let Some((_, re)) = &t.find {
            if items.first().is_some_and(|it| it.kind != Kind::End) {
                items.retain(|it| {
                    let s = shown(t, it, record.as_ref());
                    re.is_match(&s.label) || s.body.iter().any(|l| re.is_match(l))
                });
            }
        }
        let Some(first) = items.first() else { continue };
        if first.kind == Kind::End {
            if !closing {
                writeln!(out, "\n{}", paint("Where the run stands", None, color))?;
                closing = true;
            }
            for it in &items {
                block(out, &shown(t, it, None), it.kind, color, "  ", "    ")?;
            }
            continue;
        }
        // `show --follow`: each record's time first, as journalctl -f.
        let when = match t.times {
            true => format!(
                "{}  ",
                crate::output::time_cell(t.time_of(first.line as usize, record.as_ref()).as_ref())
            ),
            false => String::new(),
        };
        let header = match record.as_ref().and_then(|r| r.payload.as_ref()) {
            Some(Payload::Assistant(a)) => {
                let mut h = format!(
                    "{when}seq {}  iteration {}  assistant",
                    first.seq, a.iteration
                );
                if !a.stop_reason.is_empty() {
                    h.push_str(&format!(
                        "  stop {}",
                        crate::output::sanitize(&a.stop_reason, false)
                    ));
                }
                h.push_str(&format!(
                    "  tokens {} in, {} out",
                    a.in_tokens, a.out_tokens
                ));
                Some(h)
            }
            Some(Payload::User(_)) => Some(format!("{when}seq {}  user", first.seq)),
            _ => None,
        };
        writeln!(out)?;
        match header {
            Some(h) => {
                writeln!(out, "{}", paint(&h, None, color))?;
                for it in &items {
                    item(out, t, it, record.as_ref(), thinking, color, "  ")?;
                }
            }
            None => {
                let at = match first.seq {
                    0 => when.clone(),
                    s => format!("{when}seq {s}  "),
                };
                item(out, t, first, record.as_ref(), thinking, color, &at)?;
            }
        }
    }
    Ok(())
}

fn item(
    out: &mut dyn Write,
    t: &Transcript,
    it: &Item,
    record: Option<&Record>,
    thinking: bool,
    color: bool,
    lead: &str,
) -> io::Result<()> {
    let s = shown(t, it, record);
    if it.kind == Kind::Thinking && !thinking && !s.body.is_empty() {
        let n = s.body.len();
        let plural = if n == 1 { "" } else { "s" };
        return writeln!(
            out,
            "{lead}{} hidden: {n} line{plural}; --thinking shows it",
            paint(&s.label, Hue::of(it.kind), color)
        );
    }
    block(out, &s, it.kind, color, lead, "    ")
}

fn block(
    out: &mut dyn Write,
    s: &Shown,
    kind: Kind,
    color: bool,
    lead: &str,
    indent: &str,
) -> io::Result<()> {
    writeln!(out, "{lead}{}", paint(&s.label, Hue::of(kind), color))?;
    for l in &s.body {
        writeln!(out, "{indent}{l}")?;
    }
    Ok(())
}

/// `text` bold, in `hue` when it has one, when `on`; as it is otherwise.
/// `text` is already neutralised: these are the only codes written.
fn paint(text: &str, hue: Option<Hue>, on: bool) -> String {
    match (on, hue) {
        (false, _) => text.to_owned(),
        (true, None) => format!("\u{1b}[1m{text}\u{1b}[0m"),
        (true, Some(h)) => format!("\u{1b}[1;{}m{text}\u{1b}[0m", h.sgr()),
    }
}
