/*
 * frisian_tb.h: the C interface to the frisian-tb prober (Frisian draughts
 * endgame tablebases). The Rust side is src/capi.rs.
 *
 * Build the library:  cargo rustc --release --lib --crate-type staticlib
 * Link:               cc engine.c -Iinclude target/release/libfrisian_tb.a -lpthread -ldl -lm
 *
 * A tablebase may be probed from many threads at once; open it and add its
 * directories before sharing it. Squares are numbered 1-50 as in FEN; a
 * bitboard has bit (s - 1) set for square s. No function unwinds or aborts:
 * every failure is a return code (and, where there is a buffer, a message).
 */
#ifndef FRISIAN_TB_H
#define FRISIAN_TB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes. */
#define FTB_OK 0
#define FTB_ERR_MISSING_TABLE 1   /* no table (or no DTW table) for the material */
#define FTB_ERR_TOO_MANY_PIECES 2 /* more pieces than the registered tables */
#define FTB_ERR_TABLE 3           /* a file unreadable, damaged, other rules or version */
#define FTB_ERR_POSITION 4        /* an illegal position, or a FEN that does not parse */
#define FTB_ERR_ARGUMENT 5        /* null pointer, unknown rule set, unreadable directory */
#define FTB_ERR_INTERNAL 6        /* a bug in frisian-tb */

/* Rule sets. */
#define FTB_OFFICIAL 0
#define FTB_LIDRAUGHTS 1

/* Values, for the side to move. */
#define FTB_LOSS 0
#define FTB_DRAW 1
#define FTB_WIN 2

/* A position with its counter state. Index [0] is White, [1] Black. */
typedef struct FtbPosition {
    uint64_t men[2];
    uint64_t kings[2];
    uint8_t turn;                 /* 0 White, 1 Black */
    uint8_t three_move_square[2]; /* the tracked king's square, 0 for none */
    uint8_t three_move_count[2];  /* its consecutive ordinary moves, 1-3 */
    uint8_t seven_move_side;      /* official: the side with two kings; 255 if not running */
    uint8_t seven_move_count;     /* moves that side has made, 0-7 */
    uint8_t plies;                /* lidraughts: plies of kings-only play, at most 3 pieces */
} FtbPosition;

typedef struct FtbTablebase FtbTablebase;

/* Open the tables of one rule set in `dir`; NULL on failure, with a message
 * in `error` (NULL allowed). */
FtbTablebase *ftb_open(const char *dir, int rules, char *error, size_t error_len);
/* Register the tables of another directory (before sharing the tablebase);
 * a table registered from an earlier directory keeps that file (a search
 * path: the first directory that holds a table is read).
 * FTB_ERR_MISSING_TABLE if it holds none of the rule set (the tablebase
 * stays usable), FTB_ERR_ARGUMENT if it cannot be read. */
int ftb_add_directory(FtbTablebase *tb, const char *dir, char *error, size_t error_len);
void ftb_close(FtbTablebase *tb);
/* The most pieces in a registered table. */
int ftb_max_pieces(const FtbTablebase *tb);

/* Win, draw or loss for the side to move: the probe for search. */
int ftb_probe_wdl(const FtbTablebase *tb, const FtbPosition *pos, int *wdl);
/* The same and the distance to win in plies (-1 for a draw). */
int ftb_probe(const FtbTablebase *tb, const FtbPosition *pos, int *wdl, int *dtw);
/* ftb_probe for a FEN such as "W:WK18,15:BK46" (counters as in frisian-tb). */
int ftb_probe_fen(const FtbTablebase *tb, const char *fen, int *wdl, int *dtw,
                  char *error, size_t error_len);

#ifdef __cplusplus
}
#endif

#endif /* FRISIAN_TB_H */
