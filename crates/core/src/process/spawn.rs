//! The one way toolbelt starts a program for a tool, a hook or a discovered tool: a cleaned
//! environment, a session of its own under a reaper (see [`super::reaper`]), and the sandbox
//! when one is set. Callers never build a `Command` themselves; the house test checks it.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{ExitStatus, Stdio};

use super::sandbox::{Prepared, Sandbox};

/// A child's environment, as [`super::child_env`] gives it.
pub type ChildEnv = Vec<(OsString, OsString)>;

/// A program to start.
#[derive(Debug)]
pub struct Launch<'a> {
    program: OsString,
    args: Vec<OsString>,
    cwd: &'a Path,
    env: &'a [(OsString, OsString)],
    extra_env: Vec<(OsString, OsString)>,
    sandbox: Option<&'a Sandbox>,
    terminal: bool,
}

/// A started program: the reaper's process (toolbelt's child, leader of the command's
/// session and process group) and the pipe its exit arrives on.
#[derive(Debug)]
pub struct Spawned<C> {
    /// The reaper (waiting on it tells when everything the command started is gone).
    pub child: C,
    /// The reaper's pid: also the command's process group and session.
    pub pid: i32,
    /// The command's own exit.
    pub exit: ExitPipe,
}

/// A command built by [`Launch::for_foreign_spawner`], not started yet.
#[derive(Debug)]
pub struct ForeignSpawn {
    command: tokio::process::Command,
    exit: ExitPipe,
    write: OwnedFd,
}

impl ForeignSpawn {
    /// Starts the command with `spawner`, then closes toolbelt's copy of the exit pipe's write
    /// end (the reaper keeps its own). Returns what `spawner` returned and the exit pipe.
    pub fn spawn_with<T>(
        self,
        spawner: impl FnOnce(tokio::process::Command) -> std::io::Result<T>,
    ) -> std::io::Result<(T, ExitPipe)> {
        let ForeignSpawn { command, exit, write } = self;
        let spawned = spawner(command);
        drop(write);
        Ok((spawned?, exit))
    }
}

/// Where a command's exit status arrives (4 bytes, the raw wait status).
#[derive(Debug)]
pub struct ExitPipe(OwnedFd);

impl ExitPipe {
    /// Waits for the command's exit (`None`: the reaper died without telling).
    pub async fn wait(self) -> Option<ExitStatus> {
        use tokio::io::AsyncReadExt;
        let mut rx = tokio::net::unix::pipe::Receiver::from_owned_fd(self.0).ok()?;
        let mut buf = [0u8; 4];
        rx.read_exact(&mut buf).await.ok()?;
        Some(ExitStatus::from_raw(i32::from_ne_bytes(buf)))
    }

    /// Waits for the command's exit on this thread.
    pub fn wait_blocking(self) -> Option<ExitStatus> {
        use std::io::Read;
        let mut buf = [0u8; 4];
        std::fs::File::from(self.0).read_exact(&mut buf).ok()?;
        Some(ExitStatus::from_raw(i32::from_ne_bytes(buf)))
    }
}

impl<'a> Launch<'a> {
    /// `program` in `cwd` with `env` (and nothing else inherited).
    pub fn new(program: impl AsRef<OsStr>, cwd: &'a Path, env: &'a [(OsString, OsString)]) -> Self {
        Launch {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            cwd,
            env,
            extra_env: Vec::new(),
            sandbox: None,
            terminal: false,
        }
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets variables on top of the environment.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.extra_env
            .extend(vars.into_iter().map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned())));
        self
    }

    /// Runs the program in `sandbox`, if any.
    pub fn sandbox(mut self, sandbox: Option<&'a Sandbox>) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// stdin is a terminal that becomes the session's controlling terminal.
    pub fn controlling_terminal(mut self) -> Self {
        self.terminal = true;
        self
    }

    /// The command, with the reaper and the sandbox installed, and the read end of the exit pipe.
    fn command(
        self,
        stdin: Stdio,
        stdout: Stdio,
        stderr: Stdio,
    ) -> std::io::Result<(std::process::Command, ExitPipe, OwnedFd)> {
        let mut prepared = match self.sandbox {
            Some(s) => Some(Prepared::new(s, self.cwd).map_err(std::io::Error::other)?),
            None => None,
        };
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let mut cmd = std::process::Command::new(&self.program);
        cmd.args(&self.args)
            .current_dir(self.cwd)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .envs(self.extra_env.iter().map(|(k, v)| (k, v)))
            .stdin(stdin)
            .stdout(stdout)
            .stderr(stderr);
        let status_fd = write.as_raw_fd();
        let parent = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
        let terminal = self.terminal;
        let mut in_command = move || match prepared.as_mut() {
            Some(p) => p.apply(),
            None => Ok(()),
        };
        // SAFETY: the closure runs in the forked child before exec; `fork_command` makes only
        // system calls, and `Prepared::apply` only system calls on rules built before the fork.
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(move || {
                super::reaper::fork_command(status_fd, parent, terminal, &mut in_command)
            });
        }
        Ok((cmd, ExitPipe(read), write))
    }

    /// The command for a spawner that is not toolbelt's own (rmcp's child-process transport,
    /// which sets the pipes itself): see [`ForeignSpawn::spawn_with`].
    pub fn for_foreign_spawner(self) -> std::io::Result<ForeignSpawn> {
        let (cmd, exit, write) = self.command(Stdio::piped(), Stdio::piped(), Stdio::null())?;
        let mut command = tokio::process::Command::from(cmd);
        command.kill_on_drop(false);
        Ok(ForeignSpawn { command, exit, write })
    }

    /// Starts the program with tokio, with these pipes.
    pub fn spawn(
        self,
        stdin: Stdio,
        stdout: Stdio,
        stderr: Stdio,
    ) -> std::io::Result<Spawned<tokio::process::Child>> {
        let (cmd, exit, write) = self.command(stdin, stdout, stderr)?;
        let mut command = tokio::process::Command::from(cmd);
        command.kill_on_drop(false);
        let (child, exit) = ForeignSpawn { command, exit, write }.spawn_with(|mut c| c.spawn())?;
        let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        Ok(Spawned { child, pid, exit })
    }

    /// Starts the program without tokio (for a terminal, watched from threads).
    pub fn spawn_std(
        self,
        stdin: Stdio,
        stdout: Stdio,
        stderr: Stdio,
    ) -> std::io::Result<Spawned<std::process::Child>> {
        let (mut cmd, exit, write) = self.command(stdin, stdout, stderr)?;
        let child = cmd.spawn();
        drop(write);
        let child = child?;
        let pid = i32::try_from(child.id()).unwrap_or(0);
        Ok(Spawned { child, pid, exit })
    }
}
