//! A walk that lists each folder through a handle opened beneath its root, never by name.
//!
//! A walk by name (`opendir` of each folder's path) lists whatever the path leads to when it is
//! opened: a folder swapped for a symlink while the walk runs lends it the names of a folder
//! outside, and every hit must then be opened again beneath the root to be believed. Here each
//! folder is opened beneath its root by the layer's walk (one `openat2` with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS` where the kernel has it and takes the path whole, else a component at a
//! time), which must reach the very path asked; its names are read from that handle, and a
//! name's metadata is read through the same handle. So every name a walk yields was in the workspace, at the path
//! given, when its folder was opened; and the handle is let go when the folder has been listed
//! (none is kept for a later open: see the `folder` module).
//!
//! The walk runs on several threads, each with its own visitor; a folder's subfolders are
//! listed after it, by whichever thread is free.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::SystemTime;

use rustix::fs::{AtFlags, Dir, FileType, OFlags, statat};

use super::Workspace;
use super::folder::Folder;
use super::open::OpenError;
use crate::sync::LockExt as _;

/// What a listed name is, as its folder's listing says (its metadata when the listing does not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A folder (never a symlink to one).
    Folder,
    /// A symlink, not followed.
    Symlink,
    /// A pipe, a socket, a device, or a name gone before its kind could be read.
    Other,
}

/// What the visitor wants after a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Go on (a folder is listed in its turn).
    Go,
    /// Go on, but do not list this folder.
    Skip,
    /// Stop the whole walk.
    Quit,
}

/// A name as its folder listed it.
#[derive(Debug)]
pub struct Entry<'a> {
    /// The folder's path, a separator and the name.
    pub path: &'a Path,
    /// What it is.
    pub kind: Kind,
    /// The inode the listing gave.
    ino: u64,
}

impl Entry<'_> {
    /// The inode the listing gave.
    pub fn ino(&self) -> u64 {
        self.ino
    }
}

/// Looks at the names a walk lists, on one of its threads.
pub trait Visitor {
    /// A name `folder` listed.
    fn visit(&mut self, folder: &Listed<'_>, entry: &Entry<'_>) -> Step;

    /// A folder that could not be opened or listed (a folder that went away is not reported).
    fn failed(&mut self, path: &Path, error: OpenError);

    /// A folder listed as one that is something else when its turn comes (a file, or a
    /// symlink, swapped in while the walk ran): what it held is not listed.
    fn changed(&mut self, path: &Path);
}

/// A folder being listed: its checks and its handle.
pub struct Listed<'w> {
    folder: Folder<'w>,
    fd: OwnedFd,
}

impl Listed<'_> {
    /// Confirms a file this folder listed and returns its modification time, as
    /// [`Workspace::confirm_walked`] does for its path, but through the folder's handle: no
    /// second walk from the root.
    pub fn confirm(&self, entry: &Entry<'_>) -> Result<Option<SystemTime>, OpenError> {
        let name = entry.path.file_name().unwrap_or_default();
        self.folder.confirm_listed(self.fd.as_fd(), name, entry.ino)
    }
}

/// The walk's shared state.
struct Queue {
    /// Folders waiting to be listed.
    folders: Vec<PathBuf>,
    /// Threads listing a folder now (whose subfolders may still come).
    busy: usize,
    quit: bool,
}

impl Workspace {
    /// Walks `start` (an absolute path under a root, with no symlink in it: a resolved path) on
    /// `threads` threads, each with a visitor from `visitor`. `start` itself is listed, not
    /// visited.
    pub fn walk<V: Visitor>(&self, start: &Path, threads: usize, visitor: impl Fn() -> V + Sync) {
        let queue = Mutex::new(Queue { folders: vec![start.to_path_buf()], busy: 0, quit: false });
        let ready = Condvar::new();
        std::thread::scope(|s| {
            for _ in 0..threads.max(1) {
                s.spawn(|| {
                    let _stop = StopOnPanic { queue: &queue, ready: &ready };
                    let mut v = visitor();
                    let mut found = Vec::new();
                    while let Some(folder) = next(&queue, &ready) {
                        let step = self.list(&folder, &mut v, &mut found);
                        let mut q = queue.locked();
                        q.folders.append(&mut found);
                        q.busy -= 1;
                        q.quit |= step == Step::Quit;
                        ready.notify_all();
                    }
                });
            }
        });
    }

    /// Lists the folder `path`: each name is visited; folders the visitor goes into are put in
    /// `found`.
    fn list(&self, path: &Path, v: &mut impl Visitor, found: &mut Vec<PathBuf>) -> Step {
        let fd = match self.open_listed(path) {
            Ok(fd) => fd,
            Err(Failure::Gone) => return Step::Go,
            Err(Failure::Changed) => {
                v.changed(path);
                return Step::Go;
            }
            Err(Failure::Error(e)) => return fail(v, path, e),
        };
        // The listing reads through a copy of the handle; names are looked at through `fd`.
        let dir = match fd.try_clone().map(|copy| Dir::new(copy).map_err(io::Error::from)) {
            Ok(Ok(dir)) => dir,
            Ok(Err(e)) | Err(e) => return fail(v, path, e.into()),
        };
        let listed = Listed { folder: self.folder(path), fd };
        let mut buf = path.to_path_buf();
        for entry in dir {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => return fail(v, path, io::Error::from(e).into()),
            };
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => kind_of(listed.fd.as_fd(), name),
                t => kind(t),
            };
            buf.push(name);
            let step = v.visit(&listed, &Entry { path: &buf, kind, ino: entry.ino() });
            match step {
                Step::Go if kind == Kind::Folder => found.push(buf.clone()),
                Step::Quit => return Step::Quit,
                _ => {}
            }
            buf.pop();
        }
        Step::Go
    }

    /// The folder `path` opened for listing, beneath its root, with no symlink on the way: one
    /// `openat2` where the kernel has it and the path is short enough, else the layer's walk a
    /// component at a time, which must arrive at this very path. No sensitive-path check is
    /// made on the folder: its names are checked one by one, as on the fast way.
    fn open_listed(&self, path: &Path) -> Result<OwnedFd, Failure> {
        use super::beneath::{Found, WalkError, Want, walk};
        let Some((root, rel)) = self.locate(path) else { return Err(Failure::Changed) };
        let want = Want::Open(OFlags::RDONLY | OFlags::DIRECTORY);
        match walk(&self.root_dirs, root, &rel, want, false) {
            Ok(Found { fd: Some(fd), real, .. }) if real == path => Ok(fd),
            // A symlink on the way led elsewhere (inside the roots, or out of them).
            Ok(_) | Err(WalkError::Escape(_) | WalkError::Loop(_)) => Err(Failure::Changed),
            Err(WalkError::Io(e)) => Err(match e.raw_os_error() {
                Some(libc::ENOENT) => Failure::Gone,
                // A file, or a symlink, where the folder was listed.
                Some(libc::ENOTDIR | libc::ELOOP) => Failure::Changed,
                _ => Failure::Error(e.into()),
            }),
        }
    }
}

/// Why a folder could not be listed.
enum Failure {
    /// It went away: nothing to say.
    Gone,
    /// It is no longer the folder its parent listed (replaced by a file or a symlink).
    Changed,
    /// Anything else.
    Error(OpenError),
}

/// Ends the walk for every thread when this one unwinds (a visitor's panic): the others would
/// wait for its subfolders for ever. The panic itself reaches the walk's caller.
struct StopOnPanic<'a> {
    queue: &'a Mutex<Queue>,
    ready: &'a Condvar,
}

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.queue.locked().quit = true;
            self.ready.notify_all();
        }
    }
}

/// The next folder to list, waiting while other threads may still find some; `None` when the
/// walk is over.
fn next(queue: &Mutex<Queue>, ready: &Condvar) -> Option<PathBuf> {
    let mut q = queue.locked();
    loop {
        if q.quit {
            return None;
        }
        if let Some(folder) = q.folders.pop() {
            q.busy += 1;
            return Some(folder);
        }
        if q.busy == 0 {
            return None;
        }
        q = ready.wait(q).unwrap_or_else(std::sync::PoisonError::into_inner);
    }
}

/// Reports a folder that could not be listed (unless it went away or stopped being a folder
/// plainly) and goes on.
fn fail(v: &mut impl Visitor, path: &Path, e: OpenError) -> Step {
    let gone = matches!(&e, OpenError::Io(io) if io.kind() == io::ErrorKind::NotFound);
    if !gone {
        v.failed(path, e);
    }
    Step::Go
}

fn kind(t: FileType) -> Kind {
    match t {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Folder,
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Other,
    }
}

/// The kind of `name` in `dir` from its metadata (a listing that does not say).
fn kind_of(dir: BorrowedFd<'_>, name: &OsStr) -> Kind {
    statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .map_or(Kind::Other, |st| kind(FileType::from_raw_mode(st.st_mode)))
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::os::unix::fs::symlink;

    use super::*;
    use crate::config::Config;

    use crate::workspace::folder::tests::root_and_outside as setup;

    fn workspace(r: &Path, o: &Path) -> Workspace {
        let cfg = Config { home_dir: o.join("home"), ..Config::default() };
        Workspace::new(&[r.to_path_buf()], &cfg).unwrap()
    }

    /// What one walk saw: each name with its kind and, for files, the confirmation.
    type Seen = Mutex<Vec<(PathBuf, Kind, String)>>;

    /// Records every name; `step` decides what follows it, `on_folder` runs on each folder
    /// before it is let through (to race the walk).
    struct Recorder<'a, F: Fn(&Path)> {
        seen: &'a Seen,
        changed: &'a Mutex<Vec<PathBuf>>,
        step: fn(&Path, Kind) -> Step,
        on_folder: &'a F,
    }

    impl<F: Fn(&Path)> Visitor for Recorder<'_, F> {
        fn visit(&mut self, folder: &Listed<'_>, entry: &Entry<'_>) -> Step {
            let confirmed = match entry.kind {
                Kind::File => format!("{:?}", folder.confirm(entry).map_err(|e| e.to_string())),
                _ => String::new(),
            };
            self.seen.locked().push((entry.path.to_path_buf(), entry.kind, confirmed));
            if entry.kind == Kind::Folder {
                (self.on_folder)(entry.path);
            }
            (self.step)(entry.path, entry.kind)
        }

        fn failed(&mut self, path: &Path, error: OpenError) {
            panic!("{} failed: {error}", path.display());
        }

        fn changed(&mut self, path: &Path) {
            self.changed.locked().push(path.to_path_buf());
        }
    }

    fn walk(
        ws: &Workspace,
        start: &Path,
        step: fn(&Path, Kind) -> Step,
        on_folder: &(impl Fn(&Path) + Sync),
    ) -> (Vec<(PathBuf, Kind, String)>, Vec<PathBuf>) {
        let (seen, changed) = (Mutex::new(Vec::new()), Mutex::new(Vec::new()));
        ws.walk(start, 2, || Recorder { seen: &seen, changed: &changed, step, on_folder });
        let mut seen = seen.into_inner().unwrap();
        seen.sort_by(|a, b| a.0.cmp(&b.0));
        let mut changed = changed.into_inner().unwrap();
        changed.sort();
        (seen, changed)
    }

    /// Every name once, with its kind; a link is not followed; a skipped folder is not
    /// listed; each file is confirmed exactly as a whole-path confirmation from the root
    /// confirms it (same modification time, or the same refusal for a sensitive name).
    #[test]
    fn a_walk_lists_every_name_once_and_confirms_as_the_whole_path_would() {
        let (_dirs, r, o) = setup();
        fs::write(o.join("secret.txt"), "outside").unwrap();
        for d in ["a", "a/b", "skip", ".aws"] {
            fs::create_dir_all(r.join(d)).unwrap();
            fs::write(r.join(d).join("f.txt"), "x").unwrap();
        }
        fs::write(r.join(".aws/credentials"), "key").unwrap();
        symlink(&o, r.join("a/out")).unwrap();
        symlink(o.join("secret.txt"), r.join("a/secret.txt")).unwrap();
        let fifo = r.join("a/fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let ws = workspace(&r, &o);
        let skip = |p: &Path, _: Kind| if p.ends_with("skip") { Step::Skip } else { Step::Go };
        let (seen, changed) = walk(&ws, &r, skip, &|_: &Path| {});
        assert!(changed.is_empty(), "{changed:?}");
        let names: Vec<(String, Kind)> = seen
            .iter()
            .map(|(p, k, _)| (p.strip_prefix(&r).unwrap().display().to_string(), *k))
            .collect();
        let expected = [
            (".aws", Kind::Folder),
            (".aws/credentials", Kind::File),
            (".aws/f.txt", Kind::File),
            ("a", Kind::Folder),
            ("a/b", Kind::Folder),
            ("a/b/f.txt", Kind::File),
            ("a/f.txt", Kind::File),
            ("a/fifo", Kind::Other),
            ("a/out", Kind::Symlink),
            ("a/secret.txt", Kind::Symlink),
            ("skip", Kind::Folder),
        ];
        let expected: Vec<(String, Kind)> =
            expected.iter().map(|(n, k)| (n.to_string(), *k)).collect();
        assert_eq!(names, expected);
        let mut confirmed = 0;
        for (path, kind, ours) in &seen {
            if *kind != Kind::File {
                continue;
            }
            let ino =
                fs::symlink_metadata(path).ok().map(|m| std::os::unix::fs::MetadataExt::ino(&m));
            let theirs =
                ws.confirm_walked(path, ino).map(|m| m.modified().ok()).map_err(|e| e.to_string());
            assert_eq!(*ours, format!("{theirs:?}"), "{}", path.display());
            confirmed += 1;
        }
        assert_eq!(confirmed, 4);
        assert!(seen.iter().any(|(p, _, c)| p.ends_with("credentials") && c.contains("Err")));
    }

    /// An attacker's swap, made at the worst moment: each folder is replaced by a symlink to
    /// a folder outside right after its parent listed it and before it is opened itself. A walk
    /// by name would then list the outside folder's names under the workspace's path; this one
    /// lists nothing from it and says the folder could not be listed.
    #[test]
    fn a_folder_swapped_for_a_link_after_it_was_listed_lends_no_outside_name() {
        let (_dirs, r, o) = setup();
        fs::write(o.join("outside-only.txt"), "secret").unwrap();
        for d in ["a", "b/c"] {
            fs::create_dir_all(r.join(d)).unwrap();
            fs::write(r.join(d).join("inside.txt"), "x").unwrap();
        }
        let ws = workspace(&r, &o);
        let swap = |p: &Path| {
            let moved = p.with_extension("moved");
            fs::rename(p, &moved).unwrap();
            symlink(&o, p).unwrap();
        };
        let (seen, changed) = walk(&ws, &r, |_, _| Step::Go, &swap);
        let listed: Vec<String> = seen
            .iter()
            .map(|(p, _, _)| p.strip_prefix(&r).unwrap().display().to_string())
            .filter(|n| !n.ends_with(".moved")) // the root's listing may or may not show them
            .collect();
        assert!(listed.iter().all(|n| !n.contains("outside-only")), "{listed:?}");
        assert_eq!(listed, ["a", "b"], "only the root's own names");
        // Both are said to have changed (the answer then says it may be partial): found by the
        // second review of session 5, when such a folder vanished without a word.
        assert_eq!(changed, [r.join("a"), r.join("b")]);
    }

    /// A visitor that panics ends the walk, and the panic reaches the caller: the other threads
    /// waited for the panicking one's subfolders for ever, and the call hung (found in my own
    /// review of session 5).
    #[test]
    fn a_panicking_visitor_ends_the_walk_instead_of_hanging_it() {
        let (_dirs, r, o) = setup();
        for i in 0..20 {
            fs::create_dir_all(r.join(format!("d{i}/e"))).unwrap();
            fs::write(r.join(format!("d{i}/e/f.txt")), "x").unwrap();
        }
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let ws = workspace(&r, &o);
            let panics = |p: &Path, _: Kind| -> Step {
                assert!(!p.ends_with("d0/e/f.txt"), "a visitor's bug, on one name only");
                Step::Go
            };
            let walked =
                std::panic::catch_unwind(|| walk(&ws, &r, panics, &|_: &Path| {})).is_err();
            done.send(walked).unwrap();
        });
        let panicked = finished.recv_timeout(std::time::Duration::from_secs(20));
        assert_eq!(panicked, Ok(true), "the walk hung or swallowed the panic");
    }

    /// `Quit` stops the whole walk: no folder is listed after it.
    #[test]
    fn quit_stops_the_whole_walk() {
        let (_dirs, r, o) = setup();
        for i in 0..50 {
            fs::create_dir_all(r.join(format!("d{i}/e"))).unwrap();
        }
        let ws = workspace(&r, &o);
        let (seen, _) = walk(&ws, &r, |_, _| Step::Quit, &|_: &Path| {});
        assert!(seen.len() <= 2, "{} names after a quit", seen.len());
    }
}
