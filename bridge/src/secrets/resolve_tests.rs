//! The bindings of the secrets at a start (docs/secrets.md, "Bound to where it may go"),
//! against a lookup in a map.

use std::collections::HashMap;

use super::*;

struct Map(HashMap<&'static str, Kept>);

impl Lookup for Map {
    fn find(&self, name: &str) -> Result<Option<Kept>, String> {
        if name == "locked" {
            return Err("the keychain is not available: locked".into());
        }
        Ok(self.0.get(name).cloned())
    }
}

fn stores() -> Map {
    Map(HashMap::from([
        (
            "api",
            Kept::new(
                Binding::Origin("https://api.example.com".into()),
                "v-api".into(),
            ),
        ),
        (
            "env",
            Kept::new(
                Binding::Command {
                    program: "my-server".into(),
                    folder: None,
                },
                "v-env".into(),
            ),
        ),
    ]))
}

fn env(name: &str) -> Use {
    Use::Env {
        name: name.into(),
        var: "API_KEY".into(),
    }
}

fn header(name: &str) -> Use {
    Use::Header {
        name: name.into(),
        header: "Authorization".into(),
    }
}

#[test]
fn a_secret_goes_only_where_its_binding_says() {
    let at_api = Place {
        origin: Some("https://api.example.com".into()),
        ..Place::default()
    };
    let values = resolve(&[header("api")], &at_api, &stores()).expect("bound here");
    assert_eq!(values.get("api").map(String::as_str), Some("v-api"));
    let command = OsStr::new("my-server");
    let at_command = Place {
        command: Some(command),
        ..Place::default()
    };
    assert!(resolve(&[env("env")], &at_command, &stores()).is_ok());

    // Another origin, another command, a path with the same file name, the other kind.
    let elsewhere = Place {
        origin: Some("https://evil.example.com".into()),
        ..Place::default()
    };
    let refused = resolve(&[header("api")], &elsewhere, &stores()).expect_err("elsewhere");
    let Refusal::Elsewhere { asked, bound, .. } = &refused else {
        panic!("{refused:?}");
    };
    assert_eq!(
        asked,
        "the header Authorization of https://evil.example.com"
    );
    assert_eq!(bound, "the headers of https://api.example.com");
    assert!(!refused.line().contains("v-api"));
    assert_eq!(refused.error()["data"]["cause"], "secret_elsewhere");
    for command in ["other-server", "./my-server", "/tmp/my-server"] {
        let place = Place {
            command: Some(OsStr::new(command)),
            ..Place::default()
        };
        assert!(
            matches!(
                resolve(&[env("env")], &place, &stores()),
                Err(Refusal::Elsewhere { .. })
            ),
            "{command}"
        );
    }
    assert!(matches!(
        resolve(&[env("api")], &at_api, &stores()),
        Err(Refusal::Elsewhere { .. })
    ));
    assert!(matches!(
        resolve(&[header("env")], &at_command, &stores()),
        Err(Refusal::Elsewhere { .. })
    ));
}

#[test]
fn a_bound_path_and_folder_match_only_the_same_file_and_folder() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let real = tmp.path().canonicalize().expect("canonical");
    let program = real.join("server");
    std::fs::write(&program, b"").expect("write");
    let work = real.join("work");
    std::fs::create_dir(&work).expect("mkdir");
    let bound = program.to_string_lossy().into_owned();
    assert!(command_matches(&bound, program.as_os_str(), None));
    assert!(command_matches(
        &bound,
        OsStr::new("../server"),
        Some(&work)
    ));
    assert!(!command_matches(&bound, OsStr::new("server"), Some(&real)));
    let kept = Kept::new(
        Binding::Command {
            program: bound,
            folder: Some(work.clone()),
        },
        "v".into(),
    );
    let map = Map(HashMap::from([("k", kept)]));
    let inside = Place {
        command: Some(program.as_os_str()),
        cwd: Some(work.join(".")),
        ..Place::default()
    };
    assert!(resolve(&[env("k")], &inside, &map).is_ok());
    let outside = Place {
        cwd: Some(real.clone()),
        ..inside
    };
    assert!(matches!(
        resolve(&[env("k")], &outside, &map),
        Err(Refusal::Elsewhere { .. })
    ));
}

#[test]
fn a_missing_or_unreadable_secret_names_the_command_that_sets_it() {
    let place = Place::default();
    let missing = resolve(&[env("nothing")], &place, &stores()).expect_err("missing");
    let error = missing.error();
    assert_eq!(error["data"]["cause"], "secret_missing");
    let message = error["message"].as_str().expect("message");
    assert!(message.contains("secret set nothing"), "{message}");
    assert!(
        !message.contains('<'),
        "every placeholder filled: {message}"
    );
    let locked = resolve(&[env("locked")], &place, &stores()).expect_err("locked");
    assert!(locked.line().contains("locked"), "{}", locked.line());
}
