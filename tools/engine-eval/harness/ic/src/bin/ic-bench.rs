fn main() {
    let n: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    common::bench::<ic::Ic>(n);
}
