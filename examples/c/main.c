/* y = alpha*A*x + beta*y with libgemv from plain C, checked against a CPU reference.
 * Exit status: 0 correct, 1 wrong or failed, 2 no GPU (the library says why). */
#include <gemv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        gemv_status_t st_ = (call);                                                        \
        if (st_ != GEMV_STATUS_SUCCESS) {                                                  \
            fprintf(stderr, "%s failed: %s (%s)\n", #call, gemv_status_string(st_),        \
                    gemv_last_error());                                                    \
            return st_ == GEMV_STATUS_NO_DEVICE || st_ == GEMV_STATUS_NO_DRIVER ? 2 : 1;   \
        }                                                                                  \
    } while (0)

int main(void) {
    const int64_t m = 1000, k = 777;
    const float alpha = 1.5f, beta = -0.5f;
    printf("libgemv %s (runtime %d)\n", GEMV_VERSION_STRING, gemv_version());

    float *A = malloc(sizeof(float) * m * k), *x = malloc(sizeof(float) * k), *y = malloc(sizeof(float) * m);
    srand(1);
    for (int64_t i = 0; i < m * k; ++i) A[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int64_t j = 0; j < k; ++j) x[j] = (float)rand() / RAND_MAX - 0.5f;
    for (int64_t i = 0; i < m; ++i) y[i] = (float)rand() / RAND_MAX - 0.5f;

    void *dA, *dx, *dy, *ws;
    gemv_stream_t stream;
    CHECK(gemv_malloc(&dA, sizeof(float) * m * k));
    CHECK(gemv_malloc(&dx, sizeof(float) * k));
    CHECK(gemv_malloc(&dy, sizeof(float) * m));
    CHECK(gemv_malloc(&ws, GEMV_WORKSPACE_RECOMMENDED_BYTES));
    CHECK(gemv_stream_create(&stream));
    CHECK(gemv_memcpy_to_device(dA, A, sizeof(float) * m * k));
    CHECK(gemv_memcpy_to_device(dx, x, sizeof(float) * k));
    CHECK(gemv_memcpy_to_device(dy, y, sizeof(float) * m));

    CHECK(gemv(GEMV_OP_N, GEMV_DTYPE_F32, m, k, alpha, dA, k, dx, 1, beta, dy, 1, ws,
               GEMV_WORKSPACE_RECOMMENDED_BYTES, stream));
    CHECK(gemv_stream_synchronize(stream));

    float *out = malloc(sizeof(float) * m);
    CHECK(gemv_memcpy_to_host(out, dy, sizeof(float) * m));
    int bad = 0;
    for (int64_t i = 0; i < m; ++i) {
        double ref = 0, mag = 0;
        for (int64_t j = 0; j < k; ++j) {
            ref += (double)A[i * k + j] * x[j];
            mag += fabs((double)A[i * k + j] * x[j]);
        }
        ref = alpha * ref + beta * (double)y[i];
        mag = fabs(alpha) * mag + fabs(beta * y[i]);
        if (!(fabs(out[i] - ref) <= 0x1p-24 * fabs(ref) + 2.0 * k * 0x1p-24 * mag)) ++bad;
    }
    printf("%lld x %lld fp32 gemv: %d of %lld rows outside the error bound\n", (long long)m, (long long)k, bad,
           (long long)m);
    gemv_stream_destroy(stream);
    gemv_free(dA), gemv_free(dx), gemv_free(dy), gemv_free(ws);
    free(A), free(x), free(y), free(out);
    return bad ? 1 : 0;
}
