//! Message ids: `UUIDv7` strings (RFC 9562), time-ordered and unique across processes, the one
//! generator of a process (Python's `msgwire.new_id` is this one, so ids made in Rust and in
//! Python keep one order).
//!
//! Within one millisecond a 12-bit counter keeps the ids of a process increasing (RFC 9562
//! section 6.2, method 1); it starts at a random value below 2048 each new millisecond, and a
//! millisecond whose counter is spent borrows the next one. The other 62 bits are random, read
//! from the system 4 KiB at a time; the first read of a process (and of a forked child) only
//! 160 bytes, so that a process that makes a few ids, or its first one, does not pay for 409
//! (reading 4 KiB of `/dev/urandom` is about 20 us here, most of a first `from_response`'s
//! one-time cost after its code itself). A forked child must not hand out its parent's buffered bytes
//! (the same millisecond would give both the same ids): the fork hook calls
//! [`forget_randomness`].

use std::hash::{BuildHasher, Hasher};
use std::io::Read as _;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

/// Bytes of randomness read at once (one read per 409 ids).
const POOL: usize = 4096;
/// Bytes of the first read (16 ids).
const FIRST_READ: usize = 160;
/// Random bytes an id takes: 2 for the counter's start, 8 for the tail.
const PER_ID: usize = 10;
const COUNTER_MAX: u16 = 0xFFF;

struct Generator {
    last_ms: u64,
    counter: u16,
    pool: [u8; POOL],
    /// The next unused byte of `pool` (`POOL`: none left).
    at: usize,
    /// Whether the pool was read once (the first read is `FIRST_READ` bytes, not `POOL`).
    read_once: bool,
}

static GENERATOR: Mutex<Generator> = Mutex::new(Generator::new());

fn generator() -> MutexGuard<'static, Generator> {
    // no code under the lock can panic midway through an update; a poisoned lock is still sound
    GENERATOR.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A new id.
pub fn new_id() -> String {
    let mut out = String::with_capacity(36);
    generator().next(now_ms(), &mut out);
    out
}

/// `n` new ids, in order: what `n` calls of [`new_id`] give, under one lock and one clock read.
pub fn new_ids(n: usize) -> Vec<String> {
    let ms = now_ms();
    let mut generator = generator();
    (0..n)
        .map(|_| {
            let mut out = String::with_capacity(36);
            generator.next(ms, &mut out);
            out
        })
        .collect()
}

/// Drop the buffered randomness (a forked child's first id reads its own).
pub fn forget_randomness() {
    generator().forget();
}

fn now_ms() -> u64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

impl Generator {
    const fn new() -> Self {
        Self { last_ms: 0, counter: 0, pool: [0; POOL], at: POOL, read_once: false }
    }

    fn forget(&mut self) {
        self.at = POOL;
        self.read_once = false;
    }

    fn random(&mut self) -> [u8; PER_ID] {
        if self.at + PER_ID > POOL {
            let from = if self.read_once { 0 } else { POOL - FIRST_READ };
            fill(&mut self.pool[from..]);
            self.at = from;
            self.read_once = true;
        }
        let mut bytes = [0; PER_ID];
        bytes.copy_from_slice(&self.pool[self.at..self.at + PER_ID]);
        self.at += PER_ID;
        bytes
    }

    /// The next id at the time `ms`, written to `out`.
    fn next(&mut self, ms: u64, out: &mut String) {
        let random = self.random();
        if ms > self.last_ms {
            self.last_ms = ms;
            self.counter = u16::from_be_bytes([random[0], random[1]]) >> 5;
        } else if self.counter < COUNTER_MAX {
            self.counter += 1; // the same millisecond (or the clock went back): keep increasing
        } else {
            self.last_ms += 1;
            self.counter = 0;
        }
        let time = self.last_ms & 0xFFFF_FFFF_FFFF;
        let mut tail = u64::from_be_bytes([
            random[2], random[3], random[4], random[5], random[6], random[7], random[8], random[9],
        ]);
        tail = tail & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000; // the RFC 9562 variant: 0b10
        hex(out, time >> 16, 8);
        out.push('-');
        hex(out, time & 0xFFFF, 4);
        out.push_str("-7");
        hex(out, u64::from(self.counter), 3);
        out.push('-');
        hex(out, tail >> 48, 4);
        out.push('-');
        hex(out, tail & 0xFFFF_FFFF_FFFF, 12);
    }
}

/// The low `digits` hex digits of `value`, zero-padded (`format!`'s machinery costs more than
/// the rest of an id).
fn hex(out: &mut String, value: u64, digits: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..digits).rev() {
        out.push(char::from(HEX[usize::try_from(value >> (4 * shift) & 0xF).unwrap_or(0)]));
    }
}

/// Fill `pool` with the system's randomness; where the system has no `/dev/urandom` (or it
/// fails), with std's own (the per-process random keys of its hash maps, over a counter).
fn fill(pool: &mut [u8]) {
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(pool));
    if read.is_ok() {
        return;
    }
    let keys = std::collections::hash_map::RandomState::new();
    for (n, chunk) in pool.chunks_mut(8).enumerate() {
        let mut hasher = keys.build_hasher();
        hasher.write_usize(n);
        hasher.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos());
        chunk.copy_from_slice(&hasher.finish().to_le_bytes()[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(id: &str) -> (u64, u16, u64) {
        let hex: String = id.chars().filter(|&c| c != '-').collect();
        let value = u128::from_str_radix(&hex, 16).expect("hex");
        #[allow(clippy::cast_possible_truncation)] // fields of the 128 bits
        ((value >> 80) as u64, (value >> 64) as u16 & 0xFFF, value as u64)
    }

    #[test]
    fn ids_are_uuid7_and_increase() {
        let mut ids: Vec<String> = (0..5000).map(|_| new_id()).collect();
        ids.extend(new_ids(5000));
        for id in &ids {
            assert_eq!(id.len(), 36);
            assert_eq!([&id[8..9], &id[13..14], &id[18..19], &id[23..24]], ["-"; 4]);
            assert_eq!(&id[14..15], "7", "version 7: {id}");
            assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "variant 0b10: {id}");
        }
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "strictly increasing");
    }

    #[test]
    fn a_spent_counter_borrows_the_next_millisecond() {
        let mut generator = Generator::new();
        let mut ids = Vec::new();
        for _ in 0..3 * 4096 {
            let mut out = String::new();
            generator.next(1_000, &mut out);
            ids.push(out);
        }
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        let (first_ms, _, _) = parts(&ids[0]);
        let (last_ms, _, _) = parts(&ids[ids.len() - 1]);
        assert_eq!(first_ms, 1_000);
        assert!((1_002..=1_003).contains(&last_ms), "{last_ms}");
        // a clock that goes back keeps the order
        let mut out = String::new();
        generator.next(5, &mut out);
        assert!(out > ids[ids.len() - 1]);
    }

    #[test]
    fn forgotten_randomness_is_read_again() {
        let mut generator = Generator::new();
        let first = generator.random();
        generator.at = POOL;
        assert_ne!(generator.random(), first, "a new read");
    }

    #[test]
    fn the_first_read_is_small_and_the_next_ones_whole() {
        let mut generator = Generator::new();
        generator.random();
        assert_eq!(generator.at, POOL - FIRST_READ + PER_ID, "the first read: {FIRST_READ} bytes");
        for _ in 1..FIRST_READ / PER_ID {
            generator.random();
        }
        assert_eq!(generator.at, POOL, "the first read spent");
        generator.random();
        assert_eq!(generator.at, PER_ID, "the next read: the whole pool");
        generator.forget();
        generator.random();
        assert_eq!(generator.at, POOL - FIRST_READ + PER_ID, "a forked child's first read is small too");
    }
}
