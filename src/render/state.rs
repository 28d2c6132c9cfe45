//! The text form of a folded run (`RunState`), shared by `show` and `fold`:
//! what the run is, where it stands, and what it waits on. Every string
//! from the journal is untrusted and goes through `sanitize` or `cell`.

use crate::invocation::Invocation;
use crate::output::{cell, print_table, sanitize, table, Style};
use journal::fold::RunState;
use journal::record::{Block, Generation};
use std::io::{self, Write};

/// The text form of a folded run (the conversation itself is
/// `crate::transcript`).
pub fn render_state(
    out: &mut dyn Write,
    st: &RunState,
    g: &Invocation,
    style: Style,
) -> io::Result<()> {
    let s = |t: &str| sanitize(t, false).into_owned();
    let none = |t: &str| {
        if t.is_empty() {
            "none".to_owned()
        } else {
            s(t)
        }
    };
    let generation = match st.generation {
        Some(Generation::Current) => "the agent as it ships".to_owned(),
        Some(Generation::August) => format!(
            "the August 2026 agent: the current agent will not resume it; `{}` converts it",
            crate::hint::command(g, &["upgrade", &st.run_id])
        ),
        None => "no agent resumes it: readable here only".to_owned(),
    };
    writeln!(out, "  version:     {} ({generation})", st.version)?;
    writeln!(out, "  agent:       {}", none(&st.agent))?;
    writeln!(out, "  prompt:      {}", cell(&st.prompt, 100))?;
    if st.interactive {
        writeln!(out, "  interactive: yes")?;
    }
    if !st.conversation_token.is_empty() {
        writeln!(out, "  token:       {}", s(&st.conversation_token))?;
    }
    writeln!(out, "  caller:      {}", none(&st.caller))?;
    if let Some(t) = &st.terminal {
        // A terminal that records came after (a resume's claim, a new
        // turn) is history, not where the run stands (b-18).
        let current = matches!(st.status, journal::fold::Status::Terminal(_));
        writeln!(
            out,
            "  {}{}{}",
            if current {
                "terminal:    "
            } else {
                "last terminal: "
            },
            s(&t.reason),
            if t.message.is_empty() {
                String::new()
            } else {
                format!(": {}", cell(&t.message, 100))
            }
        )?;
        if !current {
            writeln!(
                out,
                "               (records came after it, so it is not where the run stands)"
            )?;
        }
    }
    writeln!(
        out,
        "  next iteration: {}   last stop reason: {}",
        st.next_iteration,
        none(&st.last_stop_reason)
    )?;
    writeln!(out, "  budget used: {}", budget_used(st))?;

    let f = &st.fingerprint;
    writeln!(out, "\nFingerprint")?;
    // Three short lines: one would pass 80 columns with a long model name.
    writeln!(
        out,
        "  provider {}  model {}",
        none(&f.provider),
        none(&f.model)
    )?;
    writeln!(
        out,
        "  thinking {}  reasoning effort {}",
        none(&f.thinking_mode),
        none(&f.reasoning_effort)
    )?;
    writeln!(
        out,
        "  max_tokens {}  max_iterations {}",
        f.max_tokens, f.max_iterations
    )?;
    writeln!(out, "  system_hash {}", none(&f.system_hash))?;
    writeln!(out, "  tools_hash  {}", none(&f.tools_hash))?;

    let c = &st.counters;
    writeln!(out, "\nCounters")?;
    writeln!(
        out,
        "  llm calls {}  tool calls {} ({} remote, {} mcp)  turns {}  context {} tokens",
        c.llm_calls,
        c.tool_calls,
        c.remote_tool_calls,
        c.mcp_tool_calls,
        st.turns,
        st.context_tokens
    )?;
    if !c.tool_calls_by_kind.is_empty() {
        let kinds: Vec<String> = c
            .tool_calls_by_kind
            .iter()
            .map(|(k, n)| format!("{} {n}", s(k)))
            .collect();
        writeln!(out, "  tool calls by kind: {}", kinds.join(", "))?;
    }
    writeln!(
        out,
        "  tokens in {}  out {}  cache read {}  cache create {}  thinking {}",
        c.in_tokens, c.out_tokens, c.cache_read_tokens, c.cache_create_tokens, c.thinking_tokens
    )?;

    writeln!(out, "\nApprovals")?;
    writeln!(
        out,
        "  standing: {}",
        if st.approvals.is_empty() {
            "none".into()
        } else {
            // Each tool once, with how many decisions named it (b-27).
            let mut seen: Vec<(&str, usize)> = Vec::new();
            for a in &st.approvals {
                match seen.iter_mut().find(|(t, _)| *t == a.as_str()) {
                    Some((_, n)) => *n += 1,
                    None => seen.push((a, 1)),
                }
            }
            seen.iter()
                .map(|(t, n)| match n {
                    1 => s(t),
                    n => format!("{} ({n} decisions)", s(t)),
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
    )?;
    writeln!(
        out,
        "  one-shot: {}",
        if st.call_approvals.is_empty() {
            "none".into()
        } else {
            st.call_approvals
                .iter()
                .map(|a| format!("{} ({})", s(&a.tool_use_id), s(&a.tool_name)))
                .collect::<Vec<_>>()
                .join(", ")
        }
    )?;
    if let Some(revisions) = st.memory_revisions.as_ref().filter(|m| !m.is_empty()) {
        writeln!(out, "\nMemory revisions")?;
        for (k, v) in revisions {
            writeln!(out, "  {} = {v}", s(k))?;
        }
    }

    if let Some(p) = &st.pending {
        writeln!(out, "\nPending batch (iteration {})", p.iteration)?;
        // Calls the run was suspended for, waiting on an approval: the
        // library's reading of the suspension (`RunState::needs_approval`).
        let needs = |id: &str| st.needs_approval.iter().any(|c| c.tool_use_id == id);
        let mut gated: Vec<(&str, &str)> = Vec::new();
        let mut t = table(&["TOOL_USE ID", "TOOL", "STATE"]).aligned_in_pipe();
        for b in p.assistant.blocks() {
            if let Block::ToolUse(u) = b {
                let state = if p.answered.contains(&u.id) {
                    "answered"
                } else if p.deferred.iter().any(|d| d.tool_use_id == u.id) {
                    "deferred, waiting"
                } else if needs(&u.id) {
                    gated.push((&u.id, &u.name));
                    "needs approval (runs once approved)"
                } else {
                    "not run (runs again on resume)"
                };
                t.add_row(vec![cell(&u.id, 40), cell(&u.name, 30), state.to_owned()]);
            }
        }
        print_table(out, t, style)?;
        if !gated.is_empty() {
            writeln!(out, "\nWaiting on approval")?;
            for (id, tool) in &gated {
                let cmd = crate::hint::command(g, &["approve", &st.run_id, id]);
                writeln!(out, "  {} ({}): approve with: {cmd}", s(id), s(tool))?;
            }
            // A standing approval for each tool that waits, by its name.
            let mut tools: Vec<&str> = gated.iter().map(|(_, tool)| *tool).collect();
            tools.sort_unstable();
            tools.dedup();
            for tool in tools {
                let all = crate::hint::command(g, &["approve", &st.run_id, "--tool", tool]);
                writeln!(
                    out,
                    "  or approve {} for the rest of the run: {all}",
                    s(tool)
                )?;
            }
        }
        if !p.open_deferrals.is_empty() {
            writeln!(out, "\nWaiting on")?;
            let mut t = table(&["TOOL_USE ID", "TOOL", "NOTE", "HANDLE"]).aligned_in_pipe();
            for d in &p.open_deferrals {
                t.add_row(vec![
                    cell(&d.tool_use_id, 40),
                    cell(&d.tool_name, 30),
                    cell(&d.note, 60),
                    cell(&d.handle, 40),
                ]);
            }
            print_table(out, t, style)?;
            // The exact command for each call, store flags and all.
            for d in &p.open_deferrals {
                let cmd = crate::hint::answer(g, &st.run_id, &d.tool_use_id);
                writeln!(out, "{}", cmd.step("  ", "answer with"))?;
            }
        }
    }

    Ok(())
}

/// What the run has spent against its budget, as the runner counts it
/// (input and output tokens over the whole run; model calls), "N of M"
/// where the fingerprint sets a limit.
fn budget_used(st: &RunState) -> String {
    let f = &st.fingerprint;
    let c = &st.counters;
    let tokens = c.in_tokens.saturating_add(c.out_tokens);
    let tokens = match f.max_tokens {
        0 => format!("{tokens} tokens (no limit)"),
        m => format!("{tokens} of {m} tokens"),
    };
    let iterations = match f.max_iterations {
        0 => format!("{} (no limit)", st.next_iteration),
        m => format!("{} of {m}", st.next_iteration),
    };
    format!("{tokens}, iterations {iterations}")
}
