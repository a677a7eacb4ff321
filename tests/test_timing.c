/* test_timing.c — the pure parts of word timestamps (src/whisper/align.c, words.c) against
 * values openai-whisper 20250625 itself gives (whisper.timing dtw_cpu, median_filter,
 * merge_punctuations; Python's bytes.decode("utf-8", "replace")), made once in the reference
 * env and written here; plus the alignment pipeline on a synthetic diagonal. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/model.h"
#include "whisper/align.h"
#include "whisper/timing.h"
#include "whisper/words.h"

/* numpy default_rng(7) standard_normal((5, 9)) float32 with x[2,3] = x[2,4] = x[1,3] (a tie) */
static const double DTW_X[45] = {
    0.001230153371579945, 0.2987455427646637, -0.27413785457611084, -0.8905918598175049, -0.454670786857605,
    -0.9916465282440186, 0.0601436011493206, 1.3402152061462402, -0.49220651388168335, -0.6204748749732971,
    0.4898420572280884, 0.35688701272010803, 0.1054142490029335, -0.9304680228233337, -0.02925182320177555,
    0.695303201675415, -1.3442145586013794, -0.45761576294898987, -1.9012227058410645, -1.289537787437439,
    -1.8417350053787231, 0.1054142490029335, 0.1054142490029335, 0.27126434445381165, 0.15675108134746552,
    -0.18693093955516815, -2.5167596340179443, -0.5386928915977478, -0.048500943928956985, 0.11330898851156235,
    -1.5301357507705688, -0.47775328159332275, -0.978519082069397, -0.8088372349739075, 1.0608986616134644,
    -0.8075346946716309, -0.03252170607447624, 0.8843898773193359, -0.5836004614830017, -0.11170195043087006,
    0.11046414077281952, 0.06378177553415298, -1.2250558137893677, 0.07614023238420486, 1.3588234186172485};
static const int DTW_TI[] = {0, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4};
static const int DTW_TJ[] = {0, 0, 0, 1, 2, 3, 4, 5, 6, 6, 7, 8};

static const float MED_X[20] = {
    -1.5471446514129639f, 0.859382688999176f,   0.11935402452945709f, -0.6414703726768494f, 2.0004165172576904f,
    0.7622597217559814f,  -1.1992888450622559f, 0.07451622933149338f, 0.576689600944519f,   -0.18878212571144104f,
    0.6829102635383606f,  -0.06651732325553894f, 0.6672475337982178f, 1.4385225772857666f,  -0.6756622791290283f,
    0.20313860476016998f, -0.46330758929252625f, 0.12726841866970062f, -1.187194585800171f, -0.5793015956878662f};
static const float MED_Y[20] = {
    0.11935402452945709f, 0.11935402452945709f, 0.7622597217559814f,  0.11935402452945709f, 0.11935402452945709f,
    0.11935402452945709f, 0.07451622933149338f, 0.576689600944519f,   0.07451622933149338f, 0.07451622933149338f,
    0.6672475337982178f,  0.6672475337982178f,  0.20313860476016998f, 0.20313860476016998f, 0.12726841866970062f,
    0.12726841866970062f, -0.46330758929252625f, -0.5793015956878662f, -0.46330758929252625f, -0.46330758929252625f};

static void test_dtw(void)
{
    int ti[14], tj[14];
    int n = sotto__dtw(DTW_X, 5, 9, ti, tj);
    CHECK(n == 12, "path of %d points", n);
    for (int i = 0; i < n && i < 12; i++)
        CHECK(ti[i] == DTW_TI[i] && tj[i] == DTW_TJ[i], "point %d: (%d, %d), reference (%d, %d)", i, ti[i], tj[i],
              DTW_TI[i], DTW_TJ[i]);
}

static void test_median(void)
{
    float x[20];
    memcpy(x, MED_X, sizeof x);
    sotto__median_filter(x, 2, 10, 7);
    for (int i = 0; i < 20; i++) CHECK(x[i] == MED_Y[i], "value %d: %.9g, reference %.9g", i, x[i], MED_Y[i]);
    float y[3] = {3, 1, 2}; /* n <= width / 2: unchanged */
    sotto__median_filter(y, 1, 3, 7);
    CHECK(y[0] == 3 && y[1] == 1 && y[2] == 2, "short row changed");
    float z[5] = {NAN, 1, 2, 3, 4}; /* NaN sorts last, as torch.sort: torch gives 1 2 2 3 3 */
    static const float zt[5] = {1, 2, 2, 3, 3};
    sotto__median_filter(z, 1, 5, 3);
    for (int i = 0; i < 5; i++) CHECK(z[i] == zt[i], "NaN order: value %d is %g, torch %g", i, z[i], zt[i]);
}

static void test_utf8(void)
{
    static const struct {
        const char *bytes;
        size_t n;
        int count;
        uint32_t cp[5];
    } cases[] = {
        {"a\xc3", 2, 2, {0x61, 0xfffd}},
        {"\xe2\x82\xac\xe2\x82", 5, 2, {0x20ac, 0xfffd}},
        {"\xed\xa0\x80x", 4, 4, {0xfffd, 0xfffd, 0xfffd, 0x78}},
        {"\xf0\x9f\x98\x80\xf4\x90\x80\x80", 8, 5, {0x1f600, 0xfffd, 0xfffd, 0xfffd, 0xfffd}},
        {"\xc0\xaf\xe0\x80\xbf", 5, 5, {0xfffd, 0xfffd, 0xfffd, 0xfffd, 0xfffd}},
        {"\xf1\x80\x80", 3, 1, {0xfffd}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        uint32_t cp[8];
        int n = sotto__utf8_decode((const unsigned char *)cases[c].bytes, cases[c].n, cp);
        CHECK(n == cases[c].count, "case %zu: %d code points, Python %d", c, n, cases[c].count);
        for (int i = 0; i < n && i < cases[c].count; i++)
            CHECK(cp[i] == cases[c].cp[i], "case %zu cp %d: %x, Python %x", c, i, cp[i], cases[c].cp[i]);
    }
}

static void test_merge(void)
{
    static const char *in[] = {" \"", "Hello", ",", " (", "world", ")", "!", " -", " yes", "'", " ¿", "no", "?"};
    static const char *out[] = {"", " \"Hello,", "", "", " (world)!", "", "", "", " - yes'", "", "", " ¿no?", ""};
    static const int toks[] = {0, 3, 0, 0, 4, 0, 0, 0, 3, 0, 0, 3, 0};
    enum { N = 13 };
    sotto__wtime w[N];
    for (int i = 0; i < N; i++) w[i] = (sotto__wtime){.word = strdup(in[i]), .n_tokens = 1};
    CHECK(sotto__merge_punctuations(w, N, "\"'“¿([{-", "\"'.。,，!！?？:：”)]}、"), "out of memory");
    for (int i = 0; i < N; i++) {
        CHECK(strcmp(w[i].word, out[i]) == 0 && w[i].n_tokens == toks[i], "word %d: '%s' (%d tokens), reference '%s' (%d)",
              i, w[i].word, w[i].n_tokens, out[i], toks[i]);
        free(w[i].word);
    }
    CHECK(sotto__py_in("", 0, "abc") && sotto__py_in("bc", 2, "abc") && !sotto__py_in("ac", 2, "abc"), "py_in");
}

/* Scores peaked on a diagonal: token t (rows 1..3 after one start row) attends frames
 * [2t, 2t+2): the jumps must walk the diagonal. */
static void test_pipeline(void)
{
    enum { H = 2, T = 5, M = 10 };
    float qk[H * T * M];
    for (int h = 0; h < H; h++)
        for (int t = 0; t < T; t++)
            for (int s = 0; s < M; s++) qk[(h * T + t) * M + s] = s / 2 == t ? 8.0f : 0.0f;
    int jump[4];
    CHECK(sotto__align_jumps(qk, H, T, M, M, 7, 1, 4, jump), "no path");
    CHECK(jump[0] == 0 && jump[1] < jump[2] && jump[2] < jump[3], "jumps %d %d %d %d", jump[0], jump[1], jump[2],
          jump[3]);
    CHECK(!sotto__align_jumps(qk, H, T, M, M, 7, 2, 4, jump), "rows beyond T accepted");
}

/* openai's default for a model without heads (every head of the second half of the
 * decoder layers), the model's own heads sorted as torch's sparse indices, and tiny.en's
 * GGUF carrying openai's _ALIGNMENT_HEADS["tiny.en"] (flat indices 6 12 17 18 19 20 21 22
 * of 4 x 6). */
static void test_heads(const char *tiny_en)
{
    sotto_model *m = sotto__model_new();
    m->info.n_text_layer = 6, m->info.n_text_head = 8;
    int *p = NULL, n = 0;
    CHECK(sotto__alignment_heads(m, &p, &n) && n == 24, "default: %d heads", n);
    for (int i = 0; i < n && i < 24; i++)
        CHECK(p[2 * i] == 3 + i / 8 && p[2 * i + 1] == i % 8, "default head %d: (%d, %d)", i, p[2 * i], p[2 * i + 1]);
    free(p);
    int32_t given[] = {5, 1, 2, 7, 5, 0};
    m->alignment_heads = (sotto__i32list){given, 6};
    CHECK(sotto__alignment_heads(m, &p, &n) && n == 3 && p[0] == 2 && p[1] == 7 && p[2] == 5 && p[3] == 0 &&
              p[4] == 5 && p[5] == 1, "given heads not sorted: %d", n);
    free(p);
    m->alignment_heads = (sotto__i32list){0};
    sotto_model_free(m);
    if (!tiny_en) return;
    CHECK(sotto_model_load(tiny_en, &m) == SOTTO_OK, "%s: %s", tiny_en, sotto_last_error());
    if (!m) return;
    static const int flat[] = {6, 12, 17, 18, 19, 20, 21, 22};
    CHECK(sotto__alignment_heads(m, &p, &n) && n == 8, "tiny.en: %d heads", n);
    for (int i = 0; i < n && i < 8; i++)
        CHECK(p[2 * i] * 6 + p[2 * i + 1] == flat[i], "tiny.en head %d: (%d, %d), openai's flat %d", i, p[2 * i],
              p[2 * i + 1], flat[i]);
    free(p);
    sotto_model_free(m);
}

int main(int argc, char **argv)
{
    test_heads(argc > 1 ? argv[1] : NULL);
    test_dtw();
    test_median();
    test_utf8();
    test_merge();
    test_pipeline();
    return check_summary();
}
