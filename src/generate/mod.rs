//! Retrograde generation of win/draw/loss and distance-to-win tables.
//!
//! Materials are solved in build order ([`Material::all`](crate::Material::all)), a material
//! together with its colour flip (an ordinary move of the side to move leads
//! from `A` to `A.flip()`).
//!
//! **Slices.** A pair is solved one *slice* at a time: all states with one
//! placement of the men (kings and counters vary), together with its partner
//! slice (the same men, the other side to move). Ordinary king moves stay
//! between a slice and its partner; man moves lead to slices whose men are
//! further advanced, captures and promotions to tables built earlier. Slices
//! are solved most advanced first (`advancement` falls by one with every man
//! move), so everything outside the slice pair being solved is final. Finished
//! values go to a work file (a byte per state, written with positioned writes
//! and read through a memory map); working memory is one batch of slices. The
//! work files and a marker of finished batches let an interrupted run resume.
//!
//! Within a batch:
//! 1. **Initialise** every state by forward move generation, in two passes.
//!    Finished games get their adjudicated value; moves that leave the batch
//!    are read from finished values. The first pass solves the placements
//!    where the side to move must capture: all their moves leave the batch.
//!    The second initialises the others: an ordinary king move into a capture
//!    placement is read like a move that leaves the batch, the rest are only
//!    counted. Capture states (most of the states of king-heavy materials)
//!    thus never enter propagation.
//! 2. **Propagate** in order of distance, with one bucket per ply count, run by
//!    run (a run is whole slice pairs, about two million states where slices
//!    are that small, so that its cells stay in the processor's cache): when a
//!    state is finally lost in `d` plies, every predecessor by a king move
//!    (found by retro-moves, [`crate::retro`]) can win in `d + 1`; when a state
//!    is finally won, each predecessor has one fewer move left that does not
//!    lose, and when none is left it is lost, in one more ply than its longest
//!    reply. Buckets are processed in increasing order, so the first win found
//!    for a state is its shortest and the last reply to be refuted its longest.
//! 3. Whatever is still open is a **draw**: neither side can force a result.
//!
//! Where the side to move has men and two or more kings, a *relay node* per
//! placement, king and carried counters stands for "a fresh move of this
//! king" (see `Fresh`): every state whose three-move state leaves that king
//! free shares it, so a finalised successor updates the node once instead of
//! each of those states.
//!
//! States are solved in parallel with rayon; per-state working values are atomics.
//!
//! The stages live in submodules:
//! - `plan` says what to generate and what a pair needs; `run` solves the
//!   pending pairs of a plan in build order, reporting through `progress`;
//! - `pair` solves a pair batch by batch into the work files of
//!   `pair_table`, and resumes them; `batch` orders slices into batches and
//!   runs;
//! - `init` is step 1 (with `leaving`: where the values of moves that leave
//!   the batch are read, and their summary) and `propagate` step 2, handing
//!   states over through `buckets`; `relay` holds the relay nodes, `work`
//!   the per-state cells, `memory` the arrays they live in;
//! - `kept` keeps the work files of tables this run solved (as
//!   `<material>.<rules>.values`) while a later pair reads them, which copies
//!   them instead of decoding the table files ([`crate::finished`]);
//! - `write` writes a solved table's files and statistics; `os` holds the
//!   system calls beyond the standard library; `error` the error type.

mod batch;
mod buckets;
mod divisor;
mod error;
mod init;
mod kept;
mod leaving;
mod memory;
mod os;
mod pair;
mod pair_table;
mod plan;
mod progress;
mod propagate;
mod relay;
mod run;
mod work;
mod write;

pub use error::GenerateError;
pub use os::free_disk;
pub use pair::solve_pair;
pub use plan::{available_memory, memory_estimate, Plan, BYTES_PER_BATCH_STATE, CHECKPOINT_EVERY};
pub use progress::{Progress, Quiet};
pub use run::run;
pub use write::write_tables;
