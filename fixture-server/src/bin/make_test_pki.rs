//! `mcp-bridge-make-test-pki <folder>`: writes the test PKI of the HTTPS fixture (see `certs/README.md`).
//!
//! Two CAs, each with one server certificate for `127.0.0.1`, `::1`, `localhost` and
//! `fixture.test`, valid from 2025 to 2099 so that the tests do not rot. The CA keys are not
//! written: making the PKI again makes new CAs, and the fixture embeds the new files.
//! The keys are test material only, public in the repository.
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};

/// The names of the server certificates.
const SERVER_NAMES: [&str; 2] = ["localhost", "fixture.test"];
/// The addresses of the server certificates.
const SERVER_ADDRESSES: [std::net::IpAddr; 2] = [
    std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
    std::net::IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
];

/// One CA and its server certificate, as PEM.
struct Chain {
    ca: String,
    server: String,
    server_key: String,
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(folder), None) = (args.next(), args.next()) else {
        eprintln!("usage: mcp-bridge-make-test-pki <folder>");
        return ExitCode::from(2);
    };
    match write_all(Path::new(&folder)) {
        Ok(written) => {
            for path in written {
                println!("wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("mcp-bridge-make-test-pki: {error}");
            ExitCode::from(1)
        }
    }
}

fn write_all(folder: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(folder)
        .map_err(|e| format!("cannot make the folder {}: {e}", folder.display()))?;
    let trusted = chain("mcp-bridge-vscode test CA", 0x1001)?;
    let untrusted = chain("mcp-bridge-vscode untrusted test CA", 0x2001)?;
    let files = [
        ("ca.crt", &trusted.ca),
        ("server.crt", &trusted.server),
        ("server.key", &trusted.server_key),
        ("untrusted-ca.crt", &untrusted.ca),
        ("untrusted-server.crt", &untrusted.server),
        ("untrusted-server.key", &untrusted.server_key),
    ];
    let mut written = Vec::new();
    for (name, text) in files {
        let path = folder.join(name);
        std::fs::write(&path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

fn validity(params: &mut CertificateParams) {
    params.not_before = rcgen::date_time_ymd(2025, 1, 1);
    params.not_after = rcgen::date_time_ymd(2099, 12, 31);
}

fn chain(ca_name: &str, serial: u64) -> Result<Chain, String> {
    let ca_key = KeyPair::generate().map_err(fail("the CA key"))?;
    let mut ca_params = CertificateParams::default();
    ca_params.distinguished_name = name(ca_name);
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca_params.serial_number = Some(serial.into());
    validity(&mut ca_params);
    let ca_cert = ca_params
        .self_signed(&ca_key)
        .map_err(fail("the CA certificate"))?;

    let server_key = KeyPair::generate().map_err(fail("the server key"))?;
    let mut params = CertificateParams::default();
    params.distinguished_name = name("localhost");
    params.subject_alt_names = SERVER_ADDRESSES
        .iter()
        .map(|ip| SanType::IpAddress(*ip))
        .collect();
    for dns in SERVER_NAMES {
        let dns = dns.try_into().map_err(fail("a DNS name"))?;
        params.subject_alt_names.push(SanType::DnsName(dns));
    }
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.serial_number = Some((serial + 1).into());
    params.use_authority_key_identifier_extension = true;
    validity(&mut params);
    let issuer = Issuer::from_params(&ca_params, &ca_key);
    let server_cert = params
        .signed_by(&server_key, &issuer)
        .map_err(fail("the server certificate"))?;
    Ok(Chain {
        ca: ca_cert.pem(),
        server: server_cert.pem(),
        server_key: server_key.serialize_pem(),
    })
}

fn fail(what: &'static str) -> impl Fn(rcgen::Error) -> String {
    move |e| format!("cannot make {what}: {e}")
}

fn name(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name.push(DnType::OrganizationName, "mcp-bridge-vscode tests");
    name
}
