//! Commands known to be dangerous: asked about even under a rule that allows the shell (never
//! in `yolo`). Judged by meaning, not spelling: options are parsed (`-Rf`, `-r -f`,
//! `--recursive --force` are the same), and wrappers (`sudo`, `env`, `command`, `nice`, ...)
//! are looked through by the policy engine before the words get here. One table, one row per
//! command, each with its reason; `every_row_is_judged_by_meaning` has a case per row.

use std::path::Path;

/// A dangerous command: its name, why, and when (`None`: always).
struct Row {
    name: &'static str,
    why: &'static str,
    when: Option<fn(&Options) -> bool>,
}

/// The options of one command, parsed: short flags from every cluster, long options (without
/// their values), and the operands; parsing stops at `--`.
#[derive(Debug, Default)]
pub struct Options {
    short: Vec<char>,
    long: Vec<String>,
    operands: Vec<String>,
    all: Vec<String>,
}

impl Options {
    /// Parses `args` (the command name first).
    pub fn parse(args: &[String]) -> Self {
        let mut o = Options { all: args.to_vec(), ..Options::default() };
        let mut options = true;
        for a in args.iter().skip(1) {
            if options && a == "--" {
                options = false;
            } else if options && a.starts_with("--") {
                o.long.push(a[2..].split('=').next().unwrap_or("").to_string());
            } else if options && a.starts_with('-') && a.len() > 1 {
                o.short.extend(a[1..].chars());
            } else {
                o.operands.push(a.clone());
            }
        }
        o
    }

    fn short(&self, c: char) -> bool {
        self.short.contains(&c)
    }

    /// A long option, or any prefix of it GNU getopt would take for it (`--rec`, `--fo`).
    fn long(&self, names: &[&str]) -> bool {
        self.long.iter().any(|l| !l.is_empty() && names.iter().any(|n| n.starts_with(l.as_str())))
    }

    fn word(&self, pred: impl Fn(&str) -> bool) -> bool {
        self.all.iter().skip(1).any(|a| pred(a))
    }
}

const TABLE: &[Row] = &[
    Row {
        name: "rm",
        why: "it removes folders recursively or files without asking (`-r`, `-R`, `-f`, in any spelling)",
        when: Some(|o| {
            o.short('r') || o.short('R') || o.short('f') || o.long(&["recursive", "force"])
        }),
    },
    Row {
        name: "ln",
        why: "a symbolic link can lead outside the workspace (`-s`)",
        when: Some(|o| o.short('s') || o.long(&["symbolic"])),
    },
    Row {
        name: "find",
        why: "it runs programs or deletes (`-exec`, `-execdir`, `-ok`, `-delete`, `-fprint`...)",
        when: Some(|o| {
            o.word(|a| {
                matches!(
                    a,
                    "-exec"
                        | "-execdir"
                        | "-ok"
                        | "-okdir"
                        | "-delete"
                        | "-fls"
                        | "-fprint"
                        | "-fprint0"
                        | "-fprintf"
                )
            })
        }),
    },
    Row {
        name: "base64",
        why: "it writes a file (`-o`, `--output`)",
        when: Some(|o| o.short('o') || o.long(&["output"])),
    },
    Row {
        name: "rg",
        why: "it runs a program on each file (`--pre`, `--hostname-bin`) or decompressors (`-z`)",
        when: Some(|o| o.short('z') || o.long(&["pre", "hostname-bin", "search-zip"])),
    },
    Row {
        name: "dd",
        why: "it writes wherever `of=` points, devices included",
        when: Some(|o| o.word(|a| a.starts_with("of="))),
    },
    Row { name: "shred", why: "it destroys files", when: None },
    Row { name: "wipefs", why: "it erases file system signatures", when: None },
    Row { name: "mkfs", why: "it makes a file system, erasing a device", when: None },
    Row { name: "fdisk", why: "it changes partition tables", when: None },
    Row { name: "parted", why: "it changes partition tables", when: None },
    Row {
        name: "chmod",
        why: "it changes permissions of a whole tree (`-R`)",
        when: Some(|o| o.short('R') || o.long(&["recursive"])),
    },
    Row {
        name: "chown",
        why: "it changes owners of a whole tree (`-R`)",
        when: Some(|o| o.short('R') || o.long(&["recursive"])),
    },
    Row { name: "truncate", why: "it empties or cuts files", when: None },
    Row {
        name: "git",
        why: "a read-only git subcommand made to write or run programs (`-c`, `--output`, `--ext-diff`, `--textconv`, `--exec`)",
        when: Some(|o| super::git::made_unsafe(&o.all)),
    },
];

/// Why `args` (one command's words) are dangerous, if they are; wrappers (`sudo`, `env`,
/// `nice`, `xargs`, ...) are looked through.
pub fn dangerous(args: &[String]) -> Option<&'static str> {
    let cmd = args.first()?;
    let base = Path::new(cmd).file_name().and_then(|f| f.to_str()).unwrap_or(cmd);
    // `mkfs.ext4`, `rg.exe`.
    let base = base.split('.').next().unwrap_or(base);
    if let Some(row) = TABLE.iter().find(|r| r.name == base) {
        let options = Options::parse(args);
        if row.when.is_none_or(|w| w(&options)) {
            return Some(row.why);
        }
    }
    let quoted: Vec<String> = args.iter().map(|a| quote(a)).collect();
    let inner = super::words::unwrap_command(&quoted.join(" "))?;
    dangerous(&super::split_words(&inner.inner))
}

/// `a` quoted for bash (single quotes) unless it is plain.
fn quote(a: &str) -> String {
    if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
        a.to_string()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        crate::shell::split_words(s)
    }

    /// Issue 34, finding 9: `rm -rf ~` was asked under a generic shell allow rule, but
    /// `rm -Rf ~`, `rm -r -f ~`, `rm --recursive --force ~` were allowed.
    #[test]
    fn every_row_is_judged_by_meaning() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "rm",
                &[
                    "rm -rf ~",
                    "rm -Rf ~",
                    "rm -r -f ~",
                    "rm --recursive --force ~",
                    "rm -fr x",
                    "rm -R x",
                    "rm --force x",
                    "rm -vfr x",
                    "/bin/rm -r x",
                ],
                &["rm x", "rm -i x", "rm -v -- -rf"],
            ),
            ("ln", &["ln -s /etc x", "ln -sf a b", "ln --symbolic a b"], &["ln a b"]),
            (
                "find",
                &["find . -exec rm {} ;", "find . -delete", "find . -fprint out"],
                &["find . -name x"],
            ),
            ("base64", &["base64 -o out in", "base64 --output=out in"], &["base64 in"]),
            ("rg", &["rg --pre ./x foo", "rg -z foo", "rg --pre=x foo"], &["rg foo"]),
            ("dd", &["dd if=/dev/zero of=/dev/sda"], &["dd if=x"]),
            ("shred", &["shred x"], &[]),
            ("wipefs", &["wipefs -a /dev/sda"], &[]),
            ("mkfs", &["mkfs.ext4 /dev/sda1", "mkfs /dev/sda"], &[]),
            ("fdisk", &["fdisk /dev/sda"], &[]),
            ("parted", &["parted /dev/sda rm 1"], &[]),
            (
                "chmod",
                &["chmod -R 777 /", "chmod --recursive a+w .", "chmod --rec 777 x"],
                &["chmod +x f"],
            ),
            ("chown", &["chown -R me /", "chown --recursive me ."], &["chown me f"]),
            ("truncate", &["truncate -s 0 f"], &[]),
            (
                "git",
                &["git -c x=y status", "git diff --output=f", "git log --ext-diff"],
                &["git status", "git log -5", "git push"],
            ),
        ];
        for row in TABLE {
            let (_, yes, no) = cases
                .iter()
                .find(|(n, _, _)| *n == row.name)
                .unwrap_or_else(|| panic!("no case for {}", row.name));
            for c in *yes {
                assert!(dangerous(&w(c)).is_some(), "{c} should be dangerous");
            }
            for c in *no {
                assert!(dangerous(&w(c)).is_none(), "{c} should not be dangerous");
            }
        }
        assert_eq!(cases.len(), TABLE.len(), "a case for every row and no other");
        // Wrappers are looked through.
        for c in [
            "sudo rm -Rf /",
            "env FOO=1 rm -r -f x",
            "command rm --recursive x",
            "nice -n 5 rm -rf x",
            "xargs rm -rf",
            "sudo -u root nohup rm -fr /",
        ] {
            assert!(dangerous(&w(c)).is_some(), "{c} should be dangerous");
        }
    }
}
