//! Materials: which men and kings each side has.
//!
//! Tables are kept from the point of view of the **side to move**: a material
//! names the side to move's pieces first, then the opponent's. `KMvK` is "the
//! side to move has a king and a man, the opponent a king". A position with
//! Black to move is looked up as its colour flip (the board turned 180 degrees,
//! colours swapped), which has White to move; so every table is a table of
//! White-to-move positions.
//!
//! Names: `K` per king, then `M` per man, for each side, joined by `v`.

use crate::piece::Side;
use crate::position::Position;
use std::fmt;
use std::str::FromStr;

/// The most pieces a material of a table may have. Index sizes fit in 64
/// bits well beyond this, and it is far beyond what a workstation can
/// generate (five pieces take minutes, six would take days); table readers
/// refuse a header that names more.
pub const MAX_PIECES: u32 = 8;

/// The pieces of both sides, side to move first.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Material {
    /// Men of the side to move.
    pub stm_men: u8,
    /// Kings of the side to move.
    pub stm_kings: u8,
    /// Men of the opponent.
    pub opp_men: u8,
    /// Kings of the opponent.
    pub opp_kings: u8,
}

impl Material {
    /// A material from its four counts.
    pub const fn new(stm_men: u8, stm_kings: u8, opp_men: u8, opp_kings: u8) -> Material {
        Material {
            stm_men,
            stm_kings,
            opp_men,
            opp_kings,
        }
    }

    /// The material of a position, side to move first.
    pub fn of(pos: &Position) -> Material {
        let (us, them) = (pos.turn(), pos.turn().opponent());
        Material {
            stm_men: pos.men(us).count() as u8,
            stm_kings: pos.kings(us).count() as u8,
            opp_men: pos.men(them).count() as u8,
            opp_kings: pos.kings(them).count() as u8,
        }
    }

    /// The same material with the other side to move.
    pub const fn flip(self) -> Material {
        Material::new(self.opp_men, self.opp_kings, self.stm_men, self.stm_kings)
    }

    /// The pair the generator solves together (an ordinary move leads from a
    /// material to its flip): this material, and its flip if that differs.
    ///
    /// ```
    /// use frisian_tb::Material;
    /// let m: Material = "KMvK".parse().unwrap();
    /// assert_eq!(m.with_flip(), ["KMvK".parse().unwrap(), "KvKM".parse().unwrap()]);
    /// let kk: Material = "KvK".parse().unwrap();
    /// assert_eq!(kk.with_flip(), [kk]);
    /// ```
    pub fn with_flip(self) -> Vec<Material> {
        if self.flip() == self {
            vec![self]
        } else {
            vec![self, self.flip()]
        }
    }

    /// Total number of pieces.
    pub const fn pieces(self) -> u32 {
        (self.stm_men + self.stm_kings + self.opp_men + self.opp_kings) as u32
    }

    /// Total number of men.
    pub const fn men(self) -> u32 {
        (self.stm_men + self.opp_men) as u32
    }

    /// Pieces of the side to move (`Side::White`) or of the opponent (`Side::Black`),
    /// as (men, kings), in the White-to-move frame of the tables.
    pub const fn side(self, side: Side) -> (u8, u8) {
        match side {
            Side::White => (self.stm_men, self.stm_kings),
            Side::Black => (self.opp_men, self.opp_kings),
        }
    }

    /// Whether both sides have pieces (otherwise the game is over and no table is needed).
    pub const fn is_playable(self) -> bool {
        // No sums: a material read from a damaged file may hold any counts.
        (self.stm_men > 0 || self.stm_kings > 0) && (self.opp_men > 0 || self.opp_kings > 0)
    }

    /// Every playable material with 2 to `max_pieces` pieces (at most
    /// [`MAX_PIECES`]), in build order: fewer pieces first, then fewer men, so
    /// that every capture (fewer pieces) and every promotion (one man fewer)
    /// leads to a material built earlier.
    pub fn all(max_pieces: u32) -> Vec<Material> {
        let mut out = Vec::new();
        for n in 2..=max_pieces.min(MAX_PIECES) {
            for sm in 0..=n {
                for sk in 0..=n - sm {
                    for om in 0..=n - sm - sk {
                        let ok = n - sm - sk - om;
                        let m = Material::new(sm as u8, sk as u8, om as u8, ok as u8);
                        if m.is_playable() && sm + sk <= 20 && om + ok <= 20 {
                            out.push(m);
                        }
                    }
                }
            }
        }
        out.sort_by_key(|m| (m.pieces(), m.men(), m.to_string()));
        out
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = |men: u8, kings: u8| "K".repeat(kings as usize) + &"M".repeat(men as usize);
        write!(
            f,
            "{}v{}",
            side(self.stm_men, self.stm_kings),
            side(self.opp_men, self.opp_kings)
        )
    }
}

/// A material name that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' is not a material name (expected e.g. KMvK: K per king, M per man, side to move first)"
)]
pub struct MaterialError(pub String);

impl FromStr for Material {
    type Err = MaterialError;
    fn from_str(s: &str) -> Result<Material, MaterialError> {
        let err = || MaterialError(s.to_string());
        let (a, b) = s.split_once(['v', 'V']).ok_or_else(err)?;
        let side = |t: &str| -> Result<(u8, u8), MaterialError> {
            let t = t.to_ascii_uppercase();
            let kings = t.chars().take_while(|&c| c == 'K').count();
            let men = t[kings..].chars().take_while(|&c| c == 'M').count();
            if kings + men != t.len() || kings + men > 20 {
                return Err(err());
            }
            Ok((men as u8, kings as u8))
        };
        let ((sm, sk), (om, ok)) = (side(a)?, side(b)?);
        let m = Material::new(sm, sk, om, ok);
        if !m.is_playable() {
            return Err(err());
        }
        Ok(m)
    }
}

/// Materials one move from `m` into another material (capture or promotion),
/// with the opponent to move; those where the opponent has no pieces are left out.
pub fn successor_materials(m: Material) -> Vec<Material> {
    let mut out = Vec::new();
    for men in 0..=m.opp_men {
        for kings in 0..=m.opp_kings {
            for promo in 0..=u8::from(m.stm_men > 0) {
                let captured = men < m.opp_men || kings < m.opp_kings;
                if !captured && promo == 0 {
                    continue;
                }
                let child = Material::new(men, kings, m.stm_men - promo, m.stm_kings + promo);
                if child.is_playable() && !out.contains(&child) {
                    out.push(child);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Material::all(5) {
            assert_eq!(m.to_string().parse::<Material>().unwrap(), m);
        }
        assert_eq!(
            "KMvK".parse::<Material>().unwrap(),
            Material::new(1, 1, 0, 1)
        );
        assert!("MKvK".parse::<Material>().is_err());
        assert!("Kv".parse::<Material>().is_err());
    }

    #[test]
    fn build_order_puts_every_successor_first() {
        let all = Material::all(5);
        assert_eq!(all.len(), 85);
        let pos = |m: &Material| all.iter().position(|x| x == m).unwrap();
        for m in &all {
            // A promotion of the side to move: one man fewer, one king more (flipped: the
            // opponent is then to move).
            if m.stm_men > 0 {
                let p =
                    Material::new(m.stm_men - 1, m.stm_kings + 1, m.opp_men, m.opp_kings).flip();
                assert!(pos(&p) < pos(m), "{p} must come before {m}");
            }
        }
    }
}
