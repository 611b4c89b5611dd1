use xfpx_amd::rewrite::{self, Mode, RewriteOptions};
#[test]
fn show() {
    let f = std::env::var("RW_FILE").unwrap_or_default();
    if f.is_empty() { return; }
    let mode = if std::env::var("RW_MODE").is_ok_and(|m| m == "screen") { Mode::Screen } else { Mode::Detect };
    let b = std::fs::read(&f).unwrap();
    let out = rewrite::rewrite(&b, &RewriteOptions { mode, table_address: 0x7f0000000000, kernels: std::env::var("RW_K").map(|k| vec![k]).unwrap_or_default(), ..Default::default() }).unwrap();
    println!("{}", out.to_text());
    std::fs::write("/tmp/rwex/out.co", &out.bytes).unwrap();
}
