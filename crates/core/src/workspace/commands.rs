//! What the workspace tells about commands: the sandbox a command gets (its roots as they are
//! now, by the handles the file layer holds), the confined profile, and the file layer's
//! judgement of the paths a known-safe command would read or a redirection write.

use std::path::Path;

use super::{Access, OpenError, Workspace};

impl Workspace {
    /// Each root as given, with the identity (device, inode) of the folder the file layer
    /// holds for it.
    pub fn root_identities(&self) -> Vec<(std::path::PathBuf, (u64, u64))> {
        self.roots
            .iter()
            .zip(&self.root_dirs)
            .filter_map(|(r, d)| {
                let st = rustix::fs::fstat(&d.fd).ok()?;
                #[allow(clippy::useless_conversion)]
                Some((r.given.clone(), (u64::from(st.st_dev), u64::from(st.st_ino))))
            })
            .collect()
    }

    /// `sandbox` (a session's, without roots) with this workspace's roots as they are now,
    /// granted by the handles the file layer holds: a root's name swapped for a symlink after
    /// the workspace was set grants nothing new. Every command is confined through this.
    #[cfg(unix)]
    pub fn confine(
        &self,
        sandbox: &crate::process::Sandbox,
    ) -> Result<crate::process::Sandbox, crate::process::SandboxError> {
        use std::os::fd::AsFd;
        let roots: Vec<(&Path, std::os::fd::BorrowedFd<'_>, bool)> = self
            .roots
            .iter()
            .zip(&self.root_dirs)
            .map(|(r, d)| (r.real.as_path(), d.fd.as_fd(), r.read_only))
            .collect();
        sandbox.with_roots(&roots)
    }

    /// The confined, read-only profile over this workspace's roots (see
    /// `Sandbox::read_only`): for commands that run unasked only because the known-safe table
    /// vouches for them.
    #[cfg(unix)]
    pub fn confine_read_only(
        &self,
    ) -> Result<crate::process::Sandbox, crate::process::SandboxError> {
        use std::os::fd::AsFd;
        let roots: Vec<(&Path, std::os::fd::BorrowedFd<'_>)> = self
            .roots
            .iter()
            .zip(&self.root_dirs)
            .map(|(r, d)| (r.real.as_path(), d.fd.as_fd()))
            .collect();
        crate::process::Sandbox::read_only(crate::files::user_home().as_deref(), &roots)
    }
}

/// The file layer's judgement of what a shell command would read or write (see
/// `crate::shell::safety::ReadJudge`): exactly what the file tools would allow.
#[cfg(unix)]
impl crate::shell::safety::ReadJudge for Workspace {
    fn may_read(&self, path: &Path) -> Result<(), String> {
        let r = self.resolve_path(path).map_err(|e| e.to_string())?;
        self.check_access(&r, Access::Read).map_err(|e| e.to_string())?;
        match self.metadata(&r) {
            Ok(m) if m.is_dir() => Ok(()),
            // A file is opened as read_file opens it: hard links to a sensitive or outside
            // file are refused there.
            Ok(_) => self.open_read(&r).map(|_| ()).map_err(|e| e.to_string()),
            Err(OpenError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn may_write(&self, path: &Path) -> Result<(), String> {
        let r = self.resolve_path(path).map_err(|e| e.to_string())?;
        self.check_access(&r, Access::Write).map_err(|e| e.to_string())?;
        match self.control_file(&r.real) {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    fn sensitive_name(&self, path: &Path) -> bool {
        match self.check_base(path) {
            Some(root) => self.sensitive.check(&super::paths::relative_to(path, root)).is_some(),
            None => true,
        }
    }

    fn control(&self, path: &Path) -> Option<String> {
        match self.resolve_path(path) {
            Ok(r) => self.control_file(&r.real),
            // A path the file layer cannot resolve is not one it would let a tool write.
            Err(e) => Some(e.to_string()),
        }
    }
}
