//! The Windows counterpart of mode 0700 for the token directory (docs/token-stores.md): a
//! protected DACL with one entry, full control for the user who runs the bridge, inherited by
//! the files in it. Protected, so that nothing is inherited from the parents: the profile's
//! `AppData\Local` also grants SYSTEM and the Administrators group.

#![allow(
    unsafe_code,
    reason = "the Windows security API has no safe binding in a maintained crate"
)]

use std::ffi::c_void;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::Security::{
    ACL, ACL_REVISION, AddAccessAllowedAceEx, CONTAINER_INHERIT_ACE, DACL_SECURITY_INFORMATION,
    GetLengthSid, GetTokenInformation, InitializeAcl, InitializeSecurityDescriptor,
    OBJECT_INHERIT_ACE, PROTECTED_DACL_SECURITY_INFORMATION, SE_DACL_PROTECTED,
    SECURITY_DESCRIPTOR, SetFileSecurityW, SetSecurityDescriptorControl, SetSecurityDescriptorDacl,
    TOKEN_QUERY, TOKEN_USER, TokenUser,
};
use windows_sys::Win32::Storage::FileSystem::FILE_ALL_ACCESS;
use windows_sys::Win32::System::SystemServices::SECURITY_DESCRIPTOR_REVISION;
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// The SID of the user who runs this process, as the bytes of its `TOKEN_USER`: the SID
/// that [`TokenUserSid::sid`] points to lives in that buffer.
pub(crate) struct TokenUserSid {
    /// u64 words keep the buffer aligned for `TOKEN_USER`.
    buf: Vec<u64>,
}

impl TokenUserSid {
    pub(crate) fn of_this_process() -> std::io::Result<TokenUserSid> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: the pseudo handle of this process needs no closing; `token` is written on
        // success and closed below.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut len = 0u32;
        // SAFETY: a null buffer of length 0 asks for the length only.
        unsafe { GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut len) };
        let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
        // SAFETY: `buf` holds `len` bytes at least.
        let ok = unsafe {
            GetTokenInformation(
                token,
                TokenUser,
                buf.as_mut_ptr().cast::<c_void>(),
                len,
                &mut len,
            )
        };
        let error = std::io::Error::last_os_error();
        // SAFETY: `token` is the handle opened above.
        unsafe { CloseHandle(token) };
        if ok == 0 {
            return Err(error);
        }
        Ok(TokenUserSid { buf })
    }

    /// The SID, valid as long as `self`.
    pub(crate) fn sid(&self) -> *mut c_void {
        // SAFETY: the buffer starts with the TOKEN_USER that GetTokenInformation wrote.
        unsafe { (*self.buf.as_ptr().cast::<TOKEN_USER>()).User.Sid }
    }
}

/// Gives `dir` a protected DACL that grants full control to this process's user only,
/// inherited by its files and folders.
pub(crate) fn make_owner_only(dir: &Path) -> std::io::Result<()> {
    let user = TokenUserSid::of_this_process()?;
    // SAFETY: the SID comes from the token and is valid while `user` lives.
    let sid_len = unsafe { GetLengthSid(user.sid()) } as usize;
    // The ACL, one ACCESS_ALLOWED_ACE (header 4 + mask 4, then the SID), in u32 words.
    let acl_len = std::mem::size_of::<ACL>() + 8 + sid_len;
    let mut acl = vec![0u32; acl_len.div_ceil(4)];
    let acl_ptr = acl.as_mut_ptr().cast::<ACL>();
    let acl_len = (acl.len() * 4) as u32;
    // SAFETY: `acl` is `acl_len` bytes, aligned for ACL; the SID is valid.
    let built = unsafe {
        InitializeAcl(acl_ptr, acl_len, ACL_REVISION) != 0
            && AddAccessAllowedAceEx(
                acl_ptr,
                ACL_REVISION,
                OBJECT_INHERIT_ACE | CONTAINER_INHERIT_ACE,
                FILE_ALL_ACCESS,
                user.sid(),
            ) != 0
    };
    if !built {
        return Err(std::io::Error::last_os_error());
    }
    // A security descriptor with that DACL, protected, set with SetFileSecurityW: it sets
    // the descriptor as given. (SetNamedSecurityInfoW would add the parent's inheritable
    // entries under wine, in spite of the protection; on Windows both set the same DACL, and
    // the files made in the folder afterwards inherit it.)
    let mut sd: SECURITY_DESCRIPTOR = SECURITY_DESCRIPTOR {
        Revision: 0,
        Sbz1: 0,
        Control: 0,
        Owner: std::ptr::null_mut(),
        Group: std::ptr::null_mut(),
        Sacl: std::ptr::null_mut(),
        Dacl: std::ptr::null_mut(),
    };
    let sd_ptr = (&mut sd as *mut SECURITY_DESCRIPTOR).cast::<c_void>();
    let wide: Vec<u16> = dir.as_os_str().encode_wide().chain([0]).collect();
    // SAFETY: `sd` is an absolute descriptor that points to `acl`, which outlives the call;
    // `wide` is a NUL-terminated path.
    let set = unsafe {
        InitializeSecurityDescriptor(sd_ptr, SECURITY_DESCRIPTOR_REVISION) != 0
            && SetSecurityDescriptorDacl(sd_ptr, 1, acl_ptr, 0) != 0
            && SetSecurityDescriptorControl(sd_ptr, SE_DACL_PROTECTED, SE_DACL_PROTECTED) != 0
            && SetFileSecurityW(
                wide.as_ptr(),
                DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                sd_ptr,
            ) != 0
    };
    if !set {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
#[path = "private_windows_tests.rs"]
mod tests;
