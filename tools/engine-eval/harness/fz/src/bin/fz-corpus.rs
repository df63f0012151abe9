fn main() {
    for p in std::env::args().skip(1) {
        common::corpus_file::<fz::Fz>(&p);
    }
}
