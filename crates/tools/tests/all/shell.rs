//! run_shell_command and the background-process tools, through the scheduler as a session runs
//! them (cases SH-* and BG-* of cases-public.md, plus the no-hang / no-orphan guarantees).

use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg};
use nix::unistd::Pid;
use regex::Regex;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_core::approver::FixedApprover;
use toolbelt_core::config::Config;
use toolbelt_core::policy::{ApprovalMode, PolicyEngine, default_rules};
use toolbelt_core::scheduler::{CallRequest, CompletedCall, Scheduler, SchedulerOptions};
use toolbelt_core::{Outcome, Registry, ToolEnv, Workspace};
use toolbelt_test_support::TempTree;
use toolbelt_tools::Services;

pub(crate) struct Session {
    pub(crate) tree: TempTree,
    pub(crate) rt: tokio::runtime::Runtime,
    services: Services,
    scheduler: Scheduler,
}

pub(crate) fn session_with(config: impl FnOnce(&mut Config)) -> Session {
    session_full(config, None)
}

pub(crate) fn session_full(
    config: impl FnOnce(&mut Config),
    events: Option<toolbelt_core::scheduler::EventSink>,
) -> Session {
    session_of(config, events, Services::default())
}

/// A session whose built-in tools share `services` (skills, a questioner).
pub(crate) fn session_of(
    config: impl FnOnce(&mut Config),
    events: Option<toolbelt_core::scheduler::EventSink>,
    services: Services,
) -> Session {
    let tree = TempTree::new();
    let mut c = Config { home_dir: tree.home().to_path_buf(), ..Config::default() };
    config(&mut c);
    let workspace = Workspace::new(&[tree.root().to_path_buf()], &c).unwrap();
    let env = ToolEnv::new(workspace, c);
    let registry = Arc::new(
        Registry::builder().tools(toolbelt_tools::builtin_tools_with(&services)).build().unwrap(),
    );
    let policy = Arc::new(PolicyEngine::new(default_rules().rules, false));
    let options = SchedulerOptions {
        mode: ApprovalMode::Yolo,
        grace: Duration::from_secs(2),
        ..SchedulerOptions::default()
    };
    let mut scheduler = Scheduler::new(
        registry,
        policy,
        Arc::new(FixedApprover(Outcome::ProceedOnce)),
        env,
        options,
    );
    if let Some(sink) = events {
        scheduler = scheduler.with_events(sink);
    }
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    Session { tree, rt, services, scheduler }
}

pub(crate) fn session() -> Session {
    session_with(|_| {})
}

impl Session {
    pub(crate) fn call_with(
        &self,
        tool: &str,
        args: Value,
        token: CancellationToken,
    ) -> CompletedCall {
        let req = CallRequest::new("c1", tool, args);
        self.rt.block_on(self.scheduler.schedule(vec![req], token)).pop().unwrap()
    }

    pub(crate) fn call(&self, tool: &str, args: Value) -> CompletedCall {
        self.call_with(tool, args, CancellationToken::new())
    }

    pub(crate) fn shell(&self, command: &str) -> CompletedCall {
        self.call("run_shell_command", json!({ "command": command }))
    }

    pub(crate) fn shutdown(&self) -> usize {
        self.rt.block_on(self.services.background.shutdown(Duration::from_millis(300)))
    }
}

pub(crate) fn output(c: &CompletedCall) -> String {
    let v = c.response.response_value();
    v["output"].as_str().unwrap_or_else(|| panic!("no output in {v}")).to_string()
}

pub(crate) fn error(c: &CompletedCall) -> String {
    let v = c.response.response_value();
    v["error"].as_str().unwrap_or_else(|| panic!("no error in {v}")).to_string()
}

pub(crate) fn display(c: &CompletedCall) -> Value {
    c.result.as_ref().map(|r| r.return_display.clone()).unwrap_or(Value::Null)
}

/// `W(x)` of the cases: the untrusted-content wrapping, with `<PID>` for any process id.
fn assert_wrapped(got: &str, want: &str) {
    let pattern = format!(
        "^{}$",
        regex::escape(&format!("<untrusted_context>\n{want}\n</untrusted_context>"))
            .replace("<PID>", r"\d+")
    );
    assert!(Regex::new(&pattern).unwrap().is_match(got), "got:\n{got}\nwant:\n{want}");
}

pub(crate) fn number_after(text: &str, key: &str) -> i32 {
    let re = Regex::new(&format!(r"{}(\d+)", regex::escape(key))).unwrap();
    re.captures(text).unwrap_or_else(|| panic!("no {key} in {text}"))[1].parse().unwrap()
}

pub(crate) fn alive(pid: i32) -> bool {
    // A zombie still answers kill(0); only running processes count.
    kill(Pid::from_raw(pid), None).is_ok()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z')))
}

/// Whether no process of the group is left. Killed members that were re-parented are reaped
/// by init asynchronously, so this waits up to two seconds for their zombies to go.
pub(crate) fn group_gone(pgid: i32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        if killpg(Pid::from_raw(pgid), None).is_err() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sh01_minimal_success() {
    let s = session();
    let c = s.shell("echo hello");
    assert_wrapped(&output(&c), "Output: hello\nProcess Group PGID: <PID>");
    assert_eq!(display(&c), json!("hello"));
}

#[test]
fn sh03_directory_outside_the_workspace_is_refused() {
    let s = session();
    let c = s.call("run_shell_command", json!({"command": "ls", "dir_path": "../outside"}));
    assert!(error(&c).contains("Path not in workspace"), "{}", error(&c));
}

#[test]
fn sh05_non_zero_exit_is_reported_not_an_error() {
    let s = session();
    let c = s.shell("false");
    assert!(c.error.is_none());
    assert_wrapped(&output(&c), "Output: (empty)\nExit Code: 1\nProcess Group PGID: <PID>");
    assert_eq!(display(&c), json!("Command exited with code: 1"));
    assert_eq!(c.result.as_ref().unwrap().summary.as_deref(), Some("Exit Code: 1"));
}

#[test]
fn sh07_stdout_and_stderr_are_merged_in_order() {
    let s = session();
    let c = s.shell("echo out; sleep 0.05; echo err 1>&2");
    assert_wrapped(&output(&c), "Output: out\nerr\nProcess Group PGID: <PID>");
}

#[test]
fn sh09_command_substitution_is_blocked_and_nothing_runs() {
    let s = session();
    let marker = s.tree.abs("ran");
    for cmd in [
        format!("echo $(touch {marker})"),
        format!("echo `touch {marker}`"),
        format!("echo \"$(touch {marker})\""),
        format!("echo >(touch {marker})"),
        format!("echo <(touch {marker})"),
        format!("bash -c 'echo $(touch {marker})'"),
    ] {
        let c = s.shell(&cmd);
        assert!(c.error.is_none(), "{cmd}");
        assert_eq!(
            output(&c),
            toolbelt_tools::shell::run_shell_command::INJECTION_MESSAGE,
            "{cmd}"
        );
        assert_eq!(display(&c), json!("Blocked: command substitution detected in shell command."));
    }
    assert!(!std::path::Path::new(&marker).exists());
    assert!(output(&s.shell("echo '$(not run)'")).contains("Output: $(not run)"));
}

#[test]
fn sh11_environment_markers() {
    let s = session();
    let c = s.shell("echo $GEMINI_CLI $PAGER $GIT_PAGER $TERM $GIT_TERMINAL_PROMPT");
    assert!(output(&c).contains("Output: 1 cat cat xterm-256color 0"), "{}", output(&c));
}

#[test]
fn sh13_background_jobs_are_reported_and_stopped_at_shutdown() {
    let s = session();
    let c = s.shell("sleep 30 & echo started");
    let out = output(&c);
    assert!(out.contains("Output: started\nBackground PIDs: "), "{out}");
    let job = number_after(&out, "Background PIDs: ");
    let pgid = number_after(&out, "Process Group PGID: ");
    assert_ne!(job, pgid);
    assert!(alive(job), "the job keeps running after the call");
    assert_eq!(s.shutdown(), 1);
    assert!(!alive(job) && group_gone(pgid));
}

#[test]
fn sh15_killed_by_a_signal() {
    let s = session();
    let c = s.shell("kill -9 $$");
    assert_wrapped(&output(&c), "Output: (empty)\nSignal: 9\nProcess Group PGID: <PID>");
    assert_eq!(display(&c), json!("Command terminated by signal: 9"));
}

#[test]
fn sh17_heredoc() {
    let s = session();
    let c = s.shell("cat << 'EOF'\nhello world\nEOF");
    assert_wrapped(&output(&c), "Output: hello world\nProcess Group PGID: <PID>");
}

#[test]
fn sh19_binary_output_is_summarised() {
    let s = session();
    let c = s.shell("printf 'a\\000b'");
    assert_wrapped(
        &output(&c),
        "Output: [Binary output detected: 3 bytes not shown.]\nProcess Group PGID: <PID>",
    );
}

#[test]
fn sh21_background_command_that_finishes_at_once_reports_its_output() {
    let s = session();
    let c = s.call("run_shell_command", json!({"command": "echo quick", "is_background": true}));
    assert_wrapped(&output(&c), "Output: quick\nProcess Group PGID: <PID>");
    let listed = output(&s.call("list_background_processes", json!({})));
    assert!(
        Regex::new(r"^- \[PID \d+\] EXITED: `echo quick` \(Exit Code: 0\)$")
            .unwrap()
            .is_match(&listed),
        "{listed}"
    );
}

#[test]
fn sh23_descriptions() {
    let tree = TempTree::new();
    let env = {
        let c = Config { home_dir: tree.home().to_path_buf(), ..Config::default() };
        ToolEnv::new(Workspace::new(&[tree.root().to_path_buf()], &c).unwrap(), c)
    };
    let registry = Registry::builder().tools(toolbelt_tools::builtin_tools()).build().unwrap();
    let describe = |args: Value| {
        registry.build_call("run_shell_command", args, &env).unwrap().invocation.description()
    };
    assert_eq!(
        describe(
            json!({"command": "echo \"hello\"", "description": "Prints a friendly greeting."})
        ),
        "echo \"hello\""
    );
    let long = format!("echo {}", "hello ".repeat(30));
    assert_eq!(
        describe(json!({"command": long, "description": "Prints multiple greetings."})),
        "Prints multiple greetings."
    );
    assert_eq!(describe(json!({"command": long, "description": "  "})), long);
}

#[test]
fn sh25_missing_directory_is_a_process_level_error() {
    let s = session();
    let c = s.call("run_shell_command", json!({"command": "echo hi", "dir_path": "missing-dir"}));
    assert_eq!(c.error.as_ref().unwrap().kind.as_str(), "shell_execute_error");
    assert!(error(&c).contains("ENOENT"), "{}", error(&c));
}

#[test]
fn empty_command_is_refused() {
    let s = session();
    assert_eq!(error(&s.shell("   ")), "Command cannot be empty.");
}

#[test]
fn sleep_under_a_one_second_timeout_returns_in_about_a_second_and_leaves_nothing() {
    let s = session_with(|c| c.tool_call_timeout_ms = 1000);
    let start = Instant::now();
    let c = s.shell("echo pid=$$; sleep 1000");
    let took = start.elapsed();
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert_eq!(c.error.as_ref().unwrap().kind.as_str(), "tool_call_timeout");
    let msg = error(&c);
    assert!(msg.contains("timed out after 1000 ms"), "{msg}");
    assert!(msg.contains("pid="), "the output so far is reported: {msg}");
    let pid = number_after(&msg, "pid=");
    assert!(group_gone(pid), "process group {pid} still exists");
}

#[test]
fn a_grandchild_that_ignores_sigterm_or_leaves_the_group_is_still_stopped() {
    let s = session_with(|c| c.tool_call_timeout_ms = 1000);
    let c = s.shell(
        "(trap '' TERM; exec sleep 1001) & echo stubborn=$!; setsid sleep 1002 & echo escaped=$!; echo pid=$$; sleep 1000",
    );
    let msg = error(&c);
    let (stubborn, escaped, pid) = (
        number_after(&msg, "stubborn="),
        number_after(&msg, "escaped="),
        number_after(&msg, "pid="),
    );
    assert!(!alive(stubborn), "the SIGTERM-ignoring child survived");
    assert!(!alive(escaped), "the child in its own session survived");
    assert!(group_gone(pid));
}

#[test]
fn cancelling_stops_the_group_and_keeps_the_output() {
    let s = session();
    let token = CancellationToken::new();
    let t = token.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        t.cancel();
    });
    let c = s.call_with("run_shell_command", json!({"command": "echo pid=$$; sleep 1000"}), token);
    let out = output(&c);
    assert!(out.contains("Command was cancelled by user before it could complete. Below is the output before it was cancelled:\npid="), "{out}");
    assert_eq!(c.error.as_ref().unwrap().kind.as_str(), "cancelled");
    assert!(group_gone(number_after(&out, "pid=")));
}

#[test]
fn reading_stdin_gets_end_of_file_at_once() {
    let s = session();
    let start = Instant::now();
    let c = s.shell("read x; echo \"got=[$x] status=$?\"");
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(output(&c).contains("Output: got=[] status=1"), "{}", output(&c));
}

#[test]
fn a_prompt_that_nobody_answers_is_reported_as_waiting_for_input() {
    let s = session_with(|c| c.shell_prompt_idle_ms = 300);
    let start = Instant::now();
    let c = s.shell("echo starting; printf 'Password: '; sleep 30");
    assert!(start.elapsed() < Duration::from_secs(5));
    let out = output(&c);
    assert!(out.contains("appears to be waiting for input: it printed \"Password:\""), "{out}");
    assert!(out.contains("starting"), "{out}");
}

#[test]
fn a_silent_command_is_stopped_after_the_inactivity_timeout() {
    let s = session_with(|c| c.shell_inactivity_timeout_ms = 400);
    let c = s.shell("echo first; sleep 30");
    let out = output(&c);
    assert!(out.contains("exceeded the timeout of 0.0 minutes without output. Below is the output before it was cancelled:\nfirst"), "{out}");
}

#[test]
fn large_output_is_truncated_honestly() {
    let s = session();
    let c = s.shell("seq 1 100000");
    let out = output(&c);
    assert!(out.starts_with("Output too large. Showing first 8,000 and last 32,000 characters. For full output see: "), "{}", &out[..200]);
    let file = c.output_file.clone().unwrap();
    let saved = std::fs::read_to_string(file).unwrap();
    assert!(saved.contains("Output: 1\n2\n3\n") && saved.contains("99999\n100000\n"));
    assert!(out.contains("100000\nProcess Group PGID: "));
}

#[test]
fn output_beyond_the_memory_cap_goes_to_a_file_named_in_the_notice() {
    let s = session_with(|c| c.shell_output_cap_bytes = 1 << 20);
    let c = s.shell("yes | head -c 10000000");
    let out = output(&c);
    let file =
        Regex::new(r"For full output see: (\S+)").unwrap().captures(&out).unwrap()[1].to_string();
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 10_000_000, "the file has every byte");
    assert!(out.contains("characters omitted"), "{}", &out[..300]);
    assert!(out.len() < 50_000);
}

#[test]
fn a_dev_server_in_the_background_is_listed_readable_and_stopped_at_exit() {
    let s = session();
    let c = s.call(
        "run_shell_command",
        json!({"command": "echo listening; while true; do echo tick; sleep 0.1; done", "is_background": true, "delay_ms": 300}),
    );
    let out = output(&c);
    assert!(out.contains("Command moved to background (PID: "), "{out}");
    let pid = number_after(&out, "PID: ");
    assert_eq!(
        c.result.as_ref().unwrap().data.as_ref().unwrap()["initialOutput"]
            .as_str()
            .unwrap()
            .lines()
            .next(),
        Some("listening")
    );
    let listed = output(&s.call("list_background_processes", json!({})));
    assert!(listed.contains(&format!("- [PID {pid}] RUNNING: `echo listening;")), "{listed}");
    let read =
        output(&s.call("read_background_output", json!({"pid": pid, "lines": 2, "delay_ms": 400})));
    // Outside content, wrapped (issue 17).
    assert!(read.starts_with("<untrusted_context>\nShowing last 2 of "), "{read}");
    assert!(read.ends_with("tick\ntick\n</untrusted_context>"), "{read}");
    assert!(alive(pid));
    assert_eq!(s.shutdown(), 1);
    assert!(!alive(pid) && group_gone(pid));
    std::thread::sleep(Duration::from_millis(200));
    let listed = output(&s.call("list_background_processes", json!({})));
    assert!(listed.contains(&format!("- [PID {pid}] EXITED:")), "{listed}");
}

/// CI failure (2026-11-24): `shutdown` returned while the background command's reaper was
/// still running (it had been signalled, not waited for), so "stopped at exit" was a race.
/// Once shutdown returns, nothing of the tree may be running, the reaper included.
#[test]
fn shutdown_returns_only_once_the_reaper_itself_is_gone() {
    for _ in 0..15 {
        let s = session();
        let c = s.call("run_shell_command", json!({"command": "sleep 30", "is_background": true}));
        let pid = number_after(&output(&c), "PID: ");
        assert!(alive(pid));
        assert_eq!(s.shutdown(), 1);
        assert!(!alive(pid), "the reaper {pid} still runs after shutdown returned");
    }
}

#[test]
fn output_streams_live_to_the_scheduler_events() {
    use std::sync::Mutex;
    use toolbelt_core::scheduler::Event;
    let seen: Arc<Mutex<Vec<(Instant, String)>>> = Arc::default();
    let sink = seen.clone();
    let s = session_full(
        |_| {},
        Some(Arc::new(move |e: &Event| {
            if let Event::Output { chunk, .. } = e {
                sink.lock().unwrap().push((Instant::now(), chunk.clone()));
            }
        })),
    );
    let start = Instant::now();
    let c = s.shell("echo one; sleep 0.5; echo two");
    let end = Instant::now();
    assert!(output(&c).contains("one\ntwo"));
    let seen = seen.lock().unwrap();
    let one = seen.iter().find(|(_, c)| c.contains("one")).expect("a chunk with `one`");
    assert!(
        one.0 - start < end - start - Duration::from_millis(300),
        "`one` arrived while the command ran"
    );
    assert!(seen.iter().any(|(_, c)| c.contains("two")));
}

#[test]
fn bg01_no_background_processes() {
    let s = session();
    let c = s.call("list_background_processes", json!({}));
    assert_eq!(output(&c), "No background processes found.");
}

#[test]
fn bg03_tail_of_the_log() {
    let s = session();
    let c = s.call(
        "run_shell_command",
        json!({"command": "sleep 0.5; for i in 1 2 3; do echo line$i; done; sleep 10", "is_background": true}),
    );
    let pid = number_after(&output(&c), "PID: ");
    let read =
        |lines: u64| {
            output(&s.call(
                "read_background_output",
                json!({"pid": pid, "lines": lines, "delay_ms": 1500}),
            ))
        };
    let wrapped = |s: &str| format!("<untrusted_context>\n{s}\n</untrusted_context>");
    assert_eq!(read(2), wrapped("Showing last 2 of 3 lines:\nline2\nline3"));
    assert_eq!(read(5), wrapped("Full Log Output:\nline1\nline2\nline3"));
    let c = s.call("read_background_output", json!({"pid": 1}));
    assert_eq!(error(&c), "Background process history lookup failed for PID 1");
    s.shutdown();
}

#[test]
fn a_thousand_short_commands_leave_no_zombies_or_orphans() {
    let s = session();
    let me = std::process::id() as i32;
    let mut groups = Vec::new();
    for _ in 0..1000 {
        let c = s.shell("true");
        groups.push(number_after(&output(&c), "Process Group PGID: "));
    }
    let zombies = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("stat")).ok())
            .filter(|stat| {
                let Some((_, rest)) = stat.rsplit_once(") ") else { return false };
                let f: Vec<&str> = rest.split_whitespace().collect();
                f[0] == "Z" && f[1].parse::<i32>() == Ok(me)
            })
            .collect()
    };
    // Tests running beside this one have children too, each a zombie for the moment before it
    // is reaped: only one that stays unreaped is left behind.
    let first = zombies();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let stayed: Vec<String> = zombies().into_iter().filter(|z| first.contains(z)).collect();
    assert!(stayed.is_empty(), "zombie children: {stayed:?}");
    let left: Vec<_> = groups.iter().filter(|g| !group_gone(**g)).collect();
    assert!(left.is_empty(), "process groups still present: {left:?}");
}

#[test]
fn on_a_terminal_programs_see_a_tty_and_output_is_rendered() {
    let s = session_with(|c| c.shell_pty = true);
    let c = s.shell("test -t 1 && echo tty || echo notty; printf 'abc\\rX\\n'; printf '\\033[32mgreen\\033[0m\\n'");
    assert_wrapped(&output(&c), "Output: tty\nXbc\ngreen\nProcess Group PGID: <PID>");
    let c = s.shell("read x; echo \"got=[$x] status=$?\"; exit 3");
    assert_wrapped(&output(&c), "Output: got=[] status=1\nExit Code: 3\nProcess Group PGID: <PID>");
    assert_wrapped(
        &output(&s.shell("kill -9 $$")),
        "Output: (empty)\nSignal: 9\nProcess Group PGID: <PID>",
    );
    let plain = session();
    assert!(output(&plain.shell("test -t 1 && echo tty || echo notty")).contains("Output: notty"));
}

#[test]
fn on_a_terminal_timeouts_still_stop_the_whole_group() {
    let s = session_with(|c| {
        c.shell_pty = true;
        c.tool_call_timeout_ms = 1000;
    });
    let start = Instant::now();
    let c = s.shell("(trap '' TERM; exec sleep 1001) & echo stubborn=$!; echo pid=$$; sleep 1000");
    assert!(start.elapsed() < Duration::from_secs(4));
    let msg = error(&c);
    assert!(!alive(number_after(&msg, "stubborn=")));
    assert!(group_gone(number_after(&msg, "pid=")));
}

#[test]
fn background_processes_are_not_stopped_for_silence_or_prompts() {
    let s = session_with(|c| {
        c.shell_prompt_idle_ms = 100;
        c.shell_inactivity_timeout_ms = 100;
    });
    let c = s.call(
        "run_shell_command",
        json!({"command": "printf 'Password: '; sleep 30", "is_background": true, "delay_ms": 20}),
    );
    let pid = number_after(&output(&c), "PID: ");
    std::thread::sleep(Duration::from_millis(700));
    let listed = output(&s.call("list_background_processes", json!({})));
    assert!(listed.contains(&format!("[PID {pid}] RUNNING")), "{listed}");
    assert_eq!(s.shutdown(), 1);
    assert!(group_gone(pid));
}
