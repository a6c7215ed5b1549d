//! Links Debian's libsecp256k1 (libsecp256k1-dev, 0.2.0 in Debian 12) as a shared library.
//!
//! Not the static archive: Debian compiles libsecp256k1.a as PIE, not PIC, and lld refuses it in
//! a shared object ("relocation R_X86_64_PC32 cannot be used against symbol 'stderr'; recompile
//! with -fPIC"). So the addon needs libsecp256k1.so.1 (package libsecp256k1-1, a dependency of
//! libsecp256k1-dev) at run time; build.sh installs it, and a machine without it falls back to JS.
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CHAIND_SECP256K1_LIB_DIR");

    let mut dirs: Vec<String> = Vec::new();
    if let Ok(d) = std::env::var("CHAIND_SECP256K1_LIB_DIR") {
        dirs.push(d);
    }
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    dirs.push(format!("/usr/lib/{}-linux-gnu", arch));
    dirs.push("/usr/lib".to_string());
    dirs.push("/usr/local/lib".to_string());

    for d in &dirs {
        if Path::new(d).join("libsecp256k1.so").exists() {
            println!("cargo:rustc-link-search=native={}", d);
            break;
        }
    }
    // If it is missing the linker says so, and build.sh turns that into a warning.
    println!("cargo:rustc-link-lib=dylib=secp256k1");
}
