//! The token directory of the file store on Windows (docs/token-stores.md, docs/windows.md),
//! run under wine by ci/windows.sh: after [`FileStore::open`], the directory's DACL, read back
//! with `GetNamedSecurityInfoW`, grants nobody but the user who runs the bridge.
//!
//! Under wine the DACL is kept as the directory's POSIX mode, and a DACL read back is made
//! from that mode: it always has an entry for SYSTEM, and an entry for Everyone when the
//! mode grants anything to others (as a folder made without the bridge's DACL does). So the
//! test allows SYSTEM beside the user; on Windows the bridge's DACL has the user's entry only.
#![cfg(windows)]
#![allow(unsafe_code, reason = "reads the DACL through the Windows API")]

use std::ffi::c_void;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;

use windows_sys::Win32::Foundation::LocalFree;
use windows_sys::Win32::Security::Authorization::{GetNamedSecurityInfoW, SE_FILE_OBJECT};
use windows_sys::Win32::Security::{
    ACCESS_ALLOWED_ACE, ACE_HEADER, ACL, ACL_SIZE_INFORMATION, AclSizeInformation,
    DACL_SECURITY_INFORMATION, EqualSid, GetAce, GetAclInformation, IsWellKnownSid,
    PSECURITY_DESCRIPTOR, WinLocalSystemSid,
};
use windows_sys::Win32::Storage::FileSystem::FILE_GENERIC_READ;

use super::super::FileStore;
use super::TokenUserSid;
use crate::auth::store::key;

/// Who an allowed entry of a DACL is for.
#[derive(Debug, PartialEq)]
enum Grantee {
    User { reads: bool },
    System,
    Other,
}

/// The allowed entries of the DACL of `path` (denied entries give nothing, so they are left
/// out).
fn allowed_entries(path: &Path) -> Vec<Grantee> {
    let user = TokenUserSid::of_this_process().expect("the token's user");
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    let mut dacl: *mut ACL = std::ptr::null_mut();
    let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
    // SAFETY: `wide` is a NUL-terminated path; `sd` is freed below, `dacl` points into it.
    let status = unsafe {
        GetNamedSecurityInfoW(
            wide.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut dacl,
            std::ptr::null_mut(),
            &mut sd,
        )
    };
    assert_eq!(status, 0, "GetNamedSecurityInfoW of {}", path.display());
    assert!(!dacl.is_null(), "a null DACL grants everybody everything");
    let mut size = ACL_SIZE_INFORMATION {
        AceCount: 0,
        AclBytesInUse: 0,
        AclBytesFree: 0,
    };
    // SAFETY: `dacl` is valid while `sd` is; `size` is the struct of AclSizeInformation.
    let ok = unsafe {
        GetAclInformation(
            dacl,
            (&mut size as *mut ACL_SIZE_INFORMATION).cast::<c_void>(),
            std::mem::size_of::<ACL_SIZE_INFORMATION>() as u32,
            AclSizeInformation,
        )
    };
    assert_ne!(ok, 0, "GetAclInformation");
    let mut entries = Vec::new();
    for i in 0..size.AceCount {
        let mut ace: *mut c_void = std::ptr::null_mut();
        // SAFETY: `i` is below the count of the DACL's entries.
        assert_ne!(unsafe { GetAce(dacl, i, &mut ace) }, 0, "GetAce {i}");
        // SAFETY: every entry starts with an ACE_HEADER.
        let header = unsafe { &*ace.cast::<ACE_HEADER>() };
        if u32::from(header.AceType) != 0 {
            continue; // not ACCESS_ALLOWED_ACE_TYPE
        }
        // SAFETY: an allowed entry is an ACCESS_ALLOWED_ACE, its SID at SidStart.
        let allowed = unsafe { &*ace.cast::<ACCESS_ALLOWED_ACE>() };
        let sid = (&allowed.SidStart as *const u32)
            .cast_mut()
            .cast::<c_void>();
        // SAFETY: both SIDs are valid here.
        let grantee = if unsafe { EqualSid(sid, user.sid()) } != 0 {
            Grantee::User {
                reads: allowed.Mask & FILE_GENERIC_READ == FILE_GENERIC_READ,
            }
        } else if unsafe { IsWellKnownSid(sid, WinLocalSystemSid) } != 0 {
            Grantee::System
        } else {
            Grantee::Other
        };
        entries.push(grantee);
    }
    // SAFETY: `sd` was allocated by GetNamedSecurityInfoW.
    unsafe { LocalFree(sd) };
    entries
}

#[test]
fn the_token_directory_grants_nobody_but_the_user() {
    let root = std::env::temp_dir().join(format!("mbv-acl-{}", std::process::id()));
    let dir = root.join("tokens");
    let key = key::parse(&"ab".repeat(32)).expect("a key");
    FileStore::open(&dir, key).expect("the store opens");
    let entries = allowed_entries(&dir);
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        entries.contains(&Grantee::User { reads: true }),
        "the user can read the token directory: {entries:?}"
    );
    assert!(
        !entries.contains(&Grantee::Other),
        "nobody else is granted anything: {entries:?}"
    );
}
