/*
 * libgemv, experimental: the benchmark's and the tuner's instruments (CUDA-graph capture
 * and timed replay, the read-bandwidth ceiling). Not part of the stable API: these may
 * change or go in any minor version. Programs that only multiply need gemv.h alone.
 */
#ifndef GEMV_EXPERIMENTAL_H
#define GEMV_EXPERIMENTAL_H

#include "gemv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- timing (the benchmark and the tuner) ---- */

/* An instantiated CUDA graph (cudaGraphExec_t). */
typedef struct gemv_graph_st *gemv_graph_t;

/* Capture what the calling thread queues on stream (thread-local capture mode) ... */
GEMV_API gemv_status_t gemv_capture_begin(gemv_stream_t stream);
/* ... into an instantiated graph. */
GEMV_API gemv_status_t gemv_capture_end(gemv_stream_t stream, gemv_graph_t *graph);
/* Replay graph `replays` times back to back between two events on stream; waits for
 * them and stores the elapsed milliseconds in *ms. */
GEMV_API gemv_status_t gemv_graph_replay_ms(gemv_graph_t graph, gemv_stream_t stream, int replays, float *ms);
GEMV_API gemv_status_t gemv_graph_destroy(gemv_graph_t graph);

/* The read-bandwidth ceiling: streams `bytes` (a multiple of 16, data 16-byte aligned)
 * with 16-byte evict-first loads over a grid sized to the GPU. sink is 4 bytes of device
 * memory that keeps the loads alive (written only in a case that never occurs). */
GEMV_API gemv_status_t gemv_read_ceiling(const void *data, size_t bytes, void *sink, gemv_stream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* GEMV_EXPERIMENTAL_H */
