//! The full-screen transcript viewer (`show RUN --transcript` on a
//! terminal), ratatui over crossterm. This file owns the terminal: raw
//! mode and the alternate screen are entered once and always left, on `q`,
//! on an error, on a panic (a hook) and on SIGINT/SIGTERM/SIGHUP (a flag
//! the loop polls). The journal is indexed in slices between key presses,
//! so the first screen does not wait for the whole file.

pub mod draw;
pub mod find;
pub mod layout;
pub mod model;
#[cfg(test)]
mod tests;

use crate::error::{CmdResult, Failure};
use crate::output::Style;
use crate::transcript::index::Transcript;
use model::Model;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::crossterm::{cursor, execute};
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Leave the alternate screen and raw mode (idempotent: safe to call from
/// the panic hook and the guard both).
fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(io::stdout(), LeaveAlternateScreen, cursor::Show);
}

/// Restores the terminal when dropped, however the viewer ends.
struct Screen;

impl Screen {
    fn enter() -> io::Result<Screen> {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            prev(info);
        }));
        enable_raw_mode()?;
        let guard = Screen;
        execute!(io::stdout(), EnterAlternateScreen, cursor::Hide)?;
        Ok(guard)
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        restore();
    }
}

fn signal_flag() -> Result<Arc<AtomicBool>, Failure> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        signal_hook::flag::register(sig, Arc::clone(&flag))
            .map_err(|e| Failure::new(format!("installing signal handlers: {e}")))?;
    }
    Ok(flag)
}

/// Whether the terminal's input has hung up (its other end closed).
fn hung_up() -> bool {
    use rustix::event::{poll, PollFd, PollFlags};
    let stdin = io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let zero = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match poll(&mut fds, Some(&zero)) {
        Ok(_) => fds.first().is_some_and(|f| {
            f.revents()
                .intersects(PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL)
        }),
        Err(_) => true,
    }
}

/// What a key asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    Stay,
    Quit,
}

/// The largest count a prefix takes (`99999999G` is the last block).
const MAX_COUNT: usize = 99_999_999;

/// Moves a count repeats at most (`n`, pages): past this the screen
/// would not change anyway.
const MAX_REPEAT: usize = 10_000;

/// Poll `feed` once: new blocks are added and, when the cursor was on the
/// last block, it moves to the new last one with the end at the bottom.
fn fed(m: &mut Model, feed: &mut Feed) -> Result<bool, Failure> {
    let at_end = m.t.done() && m.cursor + 1 >= m.t.items().len();
    let got = feed(m.t)?;
    // The store gone (waited for) or back: said on the status bar as it
    // happens, as the line transcript says it on standard error.
    if let Some(notice) = got.notice {
        m.message = Some(crate::output::sanitize(&notice, false).into_owned());
        if !got.added {
            return Ok(true);
        }
    }
    if !got.added {
        return Ok(false);
    }
    if at_end {
        m.last();
    }
    Ok(true)
}

/// Apply one key to the model.
pub fn key(m: &mut Model, k: KeyEvent) -> Step {
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    if let Some(p) = m.prompt.as_mut() {
        match k.code {
            KeyCode::Enter => {
                let text = std::mem::take(p);
                m.prompt = None;
                m.start_search(&text);
            }
            KeyCode::Esc => m.prompt = None,
            KeyCode::Backspace => {
                p.pop();
            }
            KeyCode::Char('c') if ctrl => m.prompt = None,
            KeyCode::Char(c) => p.push(c),
            _ => {}
        }
        return Step::Stay;
    }
    if m.help {
        // Any key leaves the help screen; Ctrl-C still quits.
        m.help = false;
        return match k.code {
            KeyCode::Char('c') if ctrl => Step::Quit,
            _ => Step::Stay,
        };
    }
    m.message = None;
    let count = m.count.take();
    let times = count.unwrap_or(1).min(MAX_REPEAT);
    match k.code {
        // A count: digits before a key (`50G`, `5j`); a leading 0 is none.
        KeyCode::Char(d @ '0'..='9') if !ctrl && (d != '0' || count.is_some()) => {
            let digit = d.to_digit(10).unwrap_or(0) as usize;
            let n = count.unwrap_or(0).saturating_mul(10).saturating_add(digit);
            m.count = Some(n.min(MAX_COUNT));
        }
        // Esc drops a count typed; without one it leaves, as `q`.
        KeyCode::Esc if count.is_some() => {}
        KeyCode::Char('q') | KeyCode::Esc => return Step::Quit,
        // A test's way to reach the panic hook in a real terminal
        // (tests/cli/viewer.rs); not in a release build.
        #[cfg(debug_assertions)]
        KeyCode::Char('!') if std::env::var_os("FISK_ADMIN_TEST_PANIC").is_some() => {
            panic!("a panic the test asked for")
        }
        KeyCode::Char('c') if ctrl => return Step::Quit,
        KeyCode::Char('d') if ctrl => (0..times).for_each(|_| m.half(true)),
        KeyCode::Char('u') if ctrl => (0..times).for_each(|_| m.half(false)),
        KeyCode::Char('f') if ctrl => (0..times).for_each(|_| m.page(true)),
        KeyCode::Char('b') if ctrl => (0..times).for_each(|_| m.page(false)),
        KeyCode::Char('j') | KeyCode::Down => m.move_by(count.unwrap_or(1), true),
        KeyCode::Char('k') | KeyCode::Up => m.move_by(count.unwrap_or(1), false),
        KeyCode::PageDown | KeyCode::Char(' ') => (0..times).for_each(|_| m.page(true)),
        KeyCode::PageUp => (0..times).for_each(|_| m.page(false)),
        KeyCode::Char('g') | KeyCode::Home => match count {
            Some(n) => m.goto(n),
            None => m.first(),
        },
        KeyCode::Char('G') | KeyCode::End => match count {
            Some(n) => m.goto(n),
            None => m.last(),
        },
        KeyCode::Char('z') => m.toggle(),
        KeyCode::Char('Z') => m.toggle_all(),
        KeyCode::Char('/') => m.prompt = Some(String::new()),
        KeyCode::Char('n') => (0..times).for_each(|_| m.search(true)),
        KeyCode::Char('N') => (0..times).for_each(|_| m.search(false)),
        KeyCode::Char('?' | 'h') | KeyCode::F(1) => m.help = true,
        _ => {}
    }
    Step::Stay
}

/// New lines for the transcript viewed, polled between key presses (`show
/// --transcript --follow`): adds what came to the transcript, and says
/// whether anything did and what the follower noticed.
pub type Feed<'f> = dyn FnMut(&mut Transcript) -> Result<Fed, Failure> + 'f;

/// What one poll of a [`Feed`] brought.
pub struct Fed {
    /// Lines were added to the transcript.
    pub added: bool,
    /// What the follower has to say beside them (the server does not
    /// answer and it waits, or it answers again).
    pub notice: Option<String>,
}

/// View `t`; on leaving, print `next` (the commands that answer what the
/// run waits on) on the normal screen.
pub fn run(t: &mut Transcript, next: &[String], style: Style, out: &mut dyn Write) -> CmdResult {
    run_fed(t, next, style, out, None)
}

/// [`run`], with `feed` polled for new lines while no key is pressed: a
/// cursor on the last block stays on the last block as blocks come.
pub fn run_fed(
    t: &mut Transcript,
    next: &[String],
    style: Style,
    out: &mut dyn Write,
    mut feed: Option<&mut Feed>,
) -> CmdResult {
    let stop = signal_flag()?;
    let screen = Screen::enter()?;
    // A terminal that goes away (its window closed, tmux killed) leaves
    // crossterm's reader reading end-of-file in a loop it never returns
    // from, whether or not a SIGHUP came. Nothing is left to restore or
    // draw on then: a watchdog ends the process.
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_millis(250));
        if hung_up() {
            std::process::exit(129);
        }
    });
    let backend = ratatui::backend::CrosstermBackend::new(out);
    let mut term = ratatui::Terminal::new(backend)?;
    let size = term.size()?;
    let mut m = Model::new(
        t,
        size.width as usize,
        size.height.saturating_sub(1) as usize,
    );
    let mut dirty = true;
    let mut last_draw = Instant::now();
    let code = loop {
        if stop.load(Ordering::Relaxed) {
            break ExitCode::from(130);
        }

        if dirty || (!m.t.done() && last_draw.elapsed() > Duration::from_millis(200)) {
            term.draw(|f| draw::frame(f, &mut m, style.color))?;
            dirty = false;
            last_draw = Instant::now();
        }
        let wait = if m.t.done() {
            Duration::from_millis(200)
        } else {
            Duration::ZERO
        };
        if event::poll(wait)? {
            match event::read()? {
                Event::Key(k) if k.kind != KeyEventKind::Release => {
                    if key(&mut m, k) == Step::Quit {
                        break ExitCode::SUCCESS;
                    }
                    dirty = true;
                }
                Event::Resize(w, h) => {
                    term.autoresize()?;
                    m.resize(w as usize, h.saturating_sub(1) as usize);
                    dirty = true;
                }
                _ => {}
            }
        } else if !m.t.done() {
            // A slice of indexing between key presses: short enough that
            // a key waits at most this long.
            let until = Instant::now() + Duration::from_millis(30);
            while Instant::now() < until && m.t.advance(64) {}
            if m.t.done() {
                dirty = true;
            }
        } else if let Some(f) = feed.as_mut() {
            dirty |= fed(&mut m, f)?;
        }
    };
    drop(term);
    drop(screen);
    if code == ExitCode::SUCCESS {
        print_next(next)?;
    }
    Ok(code)
}

/// `next` (the commands that answer what the run waits on) on the normal
/// screen, once the viewer has left it.
pub fn print_next(next: &[String]) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    for cmd in next {
        writeln!(stdout, "next: {cmd}")?;
    }
    if !next.is_empty() {
        writeln!(stdout, "  ({})", crate::hint::Need::Answer.says())?;
    }
    Ok(())
}
