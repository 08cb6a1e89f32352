//! Tests of the sandbox's grants and profiles.

use super::*;

#[test]
fn profiles_by_name_as_upstream_spells_them() {
    for name in Profile::NAMES {
        assert_eq!(Profile::parse(name).map(Profile::name), Some(*name));
    }
    assert_eq!(Profile::parse("permissive-proxied").map(Profile::name), Some("permissive-closed"));
    assert_eq!(Profile::parse("strict-open").map(Profile::name), Some("restrictive-open"));
    assert_eq!(Profile::parse("lenient-open"), None);
    assert_eq!(Profile::parse("permissive"), None);
}

#[cfg(unix)]
#[test]
fn writes_go_to_roots_temp_and_caches_only() {
    use std::os::fd::AsFd;
    let h = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(h.path()).unwrap();
    for d in [".cache", ".ssh", ".gemini", ".toolbelt", ".cargo/bin", "w"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    let state = [home.join(".toolbelt"), home.join(".gemini")];
    let base = Sandbox::new(Profile::DEFAULT, Some(&home), &state, &[]).unwrap();
    let w = std::fs::File::open(home.join("w")).unwrap();
    let s = base.with_roots(&[(&home.join("w"), w.as_fd(), false)]).unwrap();
    let writable: Vec<&Path> = s.writable().iter().map(|g| g.path.as_path()).collect();
    assert!(writable.contains(&home.join("w").as_path()));
    assert!(writable.contains(&home.join(".cache").as_path()));
    assert!(writable.contains(&Path::new("/tmp")));
    assert!(!writable.iter().any(|p| *p == home || p.starts_with(home.join(".ssh"))));
    // Settings, policies, trust decisions and saved outputs stay out of reach.
    for p in [".gemini", ".toolbelt", ".cargo", ".cargo/bin", ".gemini/tmp", ".toolbelt/tmp"] {
        assert!(!writable.contains(&home.join(p).as_path()), "{p}");
    }
    // Other terminals are not writable.
    assert!(!writable.iter().any(|p| p.starts_with("/dev/pts")), "{writable:?}");
    // The root's control files are kept read-only.
    let protected: Vec<PathBuf> = s.protected().iter().map(Protected::path).collect();
    for rel in ROOT_CONTROL {
        assert!(protected.contains(&home.join("w").join(rel)), "{rel}: {protected:?}");
    }
    // With the home folder itself a root, the state folders inside it are protected.
    let hf = std::fs::File::open(&home).unwrap();
    let s = base.with_roots(&[(&home, hf.as_fd(), false)]).unwrap();
    let protected: Vec<PathBuf> = s.protected().iter().map(Protected::path).collect();
    assert!(protected.contains(&home.join(".toolbelt")), "{protected:?}");
    assert!(protected.contains(&home.join(".gemini")), "{protected:?}");
}

/// Issue 33, finding 2: a temp folder replaced by a symlink to `/` (or the home folder) is
/// not granted through the link.
#[cfg(unix)]
#[test]
fn a_temp_folder_that_leads_to_the_home_folder_is_refused() {
    let h = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(h.path()).unwrap();
    std::fs::create_dir_all(home.join("real")).unwrap();
    let link = home.join("tmp-link");
    std::os::unix::fs::symlink("/", &link).unwrap();
    // As root the link may be followed (root's own folder), then the grant is refused; a
    // link another user could have planted is not followed at all.
    match Sandbox::new(Profile::DEFAULT, Some(&home), &[home.join(".toolbelt")], &[link]) {
        Err(e) => assert!(e.to_string().contains("cannot be writable inside"), "{e}"),
        Ok(s) => assert!(
            !s.writable().iter().any(|g| g.path == Path::new("/") || g.path == home),
            "{:?}",
            s.writable()
        ),
    }
}
