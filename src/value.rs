//! The solved value of a state: win, draw or loss for the side to move and
//! the distance to win, with the codings tables and work files use.

use crate::rules::Wdl;
use crate::table::Header;

/// A solved value: result for the side to move and distance to win in plies
/// (0 for draws and finished games).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    /// Result for the side to move.
    pub wdl: Wdl,
    /// Plies to the end of the game with best play; 0 for draws.
    pub dtw: u16,
}

impl Value {
    /// A state's value as its table files store it: the WDL file's code
    /// (0 loss, 1 draw, 2 win) and the DTW file's value `dtw`, read as the
    /// DTW file's header `dtw_header` says (a draw's DTW is 0, whatever the
    /// file holds there: see `Metric::Dtw`).
    #[inline]
    pub fn stored(wdl: u16, dtw: u16, dtw_header: &Header) -> Value {
        let wdl = match wdl {
            0 => Wdl::Loss,
            1 => Wdl::Draw,
            _ => Wdl::Win,
        };
        Value {
            wdl,
            dtw: dtw_header.dtw_plies(dtw, wdl),
        }
    }

    /// Packed in 16 bits (WDL + 1 in the top two, DTW below), as
    /// [`load_values`](crate::finished::load_values) returns them; 0 is "not yet known".
    #[inline]
    pub const fn pack(self) -> u16 {
        ((self.wdl as u16 + 1) << 14) | self.dtw
    }
    /// The value packed by [`Value::pack`]; `None` for 0 ("not yet known").
    #[inline]
    pub fn unpack(v: u16) -> Option<Value> {
        // A table, not a match: a match compiled to a jump on the result,
        // which the generator's reads of successors mispredicted.
        const WDL: [Wdl; 4] = [Wdl::Loss, Wdl::Loss, Wdl::Draw, Wdl::Win];
        (v >> 14 != 0).then_some(Value {
            wdl: WDL[(v >> 14) as usize],
            dtw: v & 0x3FFF,
        })
    }

    /// The value in one byte, as finished values are held in memory and in
    /// the work files: 0 not known yet, 1 a draw, `c` in 2..=128 a win in
    /// `2c - 3` plies, `c` in 129..=255 a loss in `2(c - 129)` plies. A win's
    /// DTW is odd and a loss's even (the winner makes the last move), so the
    /// parity costs no bit. `None` where it does not fit: a win over 253 plies
    /// or a loss over 252 (none up to five pieces: the longest is 83), or a
    /// DTW of the wrong parity.
    #[inline]
    pub const fn to_byte(self) -> Option<u8> {
        match self.wdl {
            Wdl::Draw if self.dtw == 0 => Some(1),
            Wdl::Win if self.dtw % 2 == 1 && self.dtw <= 253 => Some((self.dtw / 2 + 2) as u8),
            Wdl::Loss if self.dtw.is_multiple_of(2) && self.dtw <= 252 => {
                Some(129 + (self.dtw / 2) as u8)
            }
            _ => None,
        }
    }

    /// The value coded by [`Value::to_byte`]; `None` for 0 ("not known yet").
    #[inline]
    pub fn from_byte(b: u8) -> Option<Value> {
        BYTE_VALUES[b as usize]
    }
}

/// [`Value::from_byte`] of every byte (1 KiB: stays in the cache).
static BYTE_VALUES: [Option<Value>; 256] = {
    let mut t = [None; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = byte_value(b as u8);
        b += 1;
    }
    t
};

/// The value coded by byte `b` ([`Value::to_byte`]), computed: the one place
/// that decodes the byte coding, for the lookup tables built from it.
pub(crate) const fn byte_value(b: u8) -> Option<Value> {
    let b = b as u16;
    match b {
        0 => None,
        1 => Some(Value {
            wdl: Wdl::Draw,
            dtw: 0,
        }),
        2..=128 => Some(Value {
            wdl: Wdl::Win,
            dtw: 2 * b - 3,
        }),
        _ => Some(Value {
            wdl: Wdl::Loss,
            dtw: 2 * (b - 129),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value that fits a byte comes back from it unchanged, every byte
    /// but 0 ("not known yet") is some value's code, and values that do not
    /// fit are refused.
    #[test]
    fn values_in_a_byte_round_trip() {
        let mut coded = 0;
        for wdl in [Wdl::Loss, Wdl::Draw, Wdl::Win] {
            for dtw in 0..400u16 {
                let v = Value { wdl, dtw };
                // A win's DTW is odd, a loss's even, a draw's 0.
                let fits = match wdl {
                    Wdl::Draw => dtw == 0,
                    Wdl::Win => dtw % 2 == 1 && dtw <= 253,
                    Wdl::Loss => dtw % 2 == 0 && dtw <= 252,
                };
                assert_eq!(v.to_byte().is_some(), fits, "{v:?}");
                if let Some(b) = v.to_byte() {
                    assert_eq!(Value::from_byte(b), Some(v));
                    coded += 1;
                }
            }
        }
        assert_eq!(coded, 255);
        assert_eq!(Value::from_byte(0), None);
        for b in 1..=255u8 {
            assert_eq!(Value::from_byte(b).and_then(Value::to_byte), Some(b));
        }
    }
}
