/* serve_rt.c — the transcription subset of OpenAI's Realtime protocol, for one session:
 * client events parsed strictly (jansson), session.update (GA: session.type
 * "transcription", session.audio.input.{format, transcription, turn_detection}; any other
 * member refused by name, as OpenAI's unknown_parameter) and the
 * beta transcription_session.update checked whole before any of it applies, appends
 * decoded (serve_b64.c), and the server events written: session.created/updated, OpenAI's
 * error events (with the client's event_id). The audio and its turns: serve_turn.c. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "output.h"
#include "serve_rt.h"

/* The session object as session.created/updated carry it (GA, or the beta's shape). */
static void put_session(serve_rt *rt, rt_event *ev)
{
    const rt_config *c = &rt->conf;
    FILE *f = ev->f;
    fprintf(f, ", \"session\": {\"object\": \"realtime.transcription_session\", \"id\": \"sess_%d\"", rt->id);
    char vad[160] = "null";
    if (c->vad)
        snprintf(vad, sizeof vad, "{\"type\": \"server_vad\", \"threshold\": %g, \"prefix_padding_ms\": %d, "
                 "\"silence_duration_ms\": %d}", c->threshold, c->prefix_padding_ms, c->silence_duration_ms);
    const char *key = c->beta ? "input_audio_transcription" : "transcription";
    char *tr = NULL;
    size_t n_tr = 0;
    FILE *t = open_memstream(&tr, &n_tr);
    if (!t) return;
    fputs("{\"model\": ", t);
    out_json_string(t, rt->cfg->model_id);
    fputs(", \"language\": ", t);
    if (c->language[0]) out_json_string(t, c->language);
    else fputs("null", t);
    fputs(", \"prompt\": ", t);
    out_json_string(t, c->prompt);
    fputc('}', t);
    fclose(t);
    if (c->beta)
        fprintf(f, ", \"input_audio_format\": \"pcm16\", \"%s\": %s, \"turn_detection\": %s, "
                "\"input_audio_noise_reduction\": null, \"include\": []}", key, tr ? tr : "null", vad);
    else
        fprintf(f, ", \"type\": \"transcription\", \"audio\": {\"input\": {\"format\": {\"type\": \"audio/pcm\", "
                "\"rate\": %d}, \"%s\": %s, \"turn_detection\": %s, \"noise_reduction\": null}}, \"include\": []}",
                c->rate, key, tr ? tr : "null", vad);
    free(tr);
}

static void send_session(serve_rt *rt, const char *type)
{
    rt_event ev;
    if (!rt_event_begin(rt, &ev, type)) return;
    put_session(rt, &ev);
    rt_event_send(rt, &ev);
}

/* ---- session.update ---- */

/* False with OpenAI's unknown_parameter error when object O (at PATH) has a member not
 * in KEYS (NULL-terminated): a misspelt setting is refused, not silently left out. */
static bool known_keys(serve_rt *rt, const json_t *o, const char *path, const char *const *keys)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        const char *const *p = keys;
        while (*p && strcmp(*p, k)) p++;
        if (*p) continue;
        char param[160], known[256] = "";
        snprintf(param, sizeof param, "%s.%.64s", path, k);
        for (p = keys; *p; p++)
            snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", p == keys ? "" : ", ", *p);
        serve_rt_error(rt, "unknown_parameter", param, "Unknown parameter: '%s'. (%s takes %s)", param, path, known);
        return false;
    }
    return true;
}

/* noise_reduction (GA) or input_audio_noise_reduction (beta): null only, as none is applied. */
static bool parse_noise(serve_rt *rt, const json_t *n, const char *path)
{
    if (!n || json_is_null(n)) return true;
    serve_rt_error(rt, "invalid_value", path, "%s: no noise reduction is applied here; leave it out or set it to "
                   "null", path);
    return false;
}

/* include: an array, and none of OpenAI's extras (log probabilities) is served. */
static bool parse_include(serve_rt *rt, const json_t *in, const char *path)
{
    if (!in || json_is_null(in) || (json_is_array(in) && json_array_size(in) == 0)) return true;
    serve_rt_error(rt, "invalid_value", path, json_is_array(in) ? "%s: the transcripts' log probabilities are not "
                   "served; leave it out or send []" : "%s must be an array", path);
    return false;
}

/* Sets *OUT from member KEY of O when present: a string of at most CAP - 1 bytes, or
 * null (empty) when NULL_OK; false with an error event naming PATH. */
static bool get_string(serve_rt *rt, const json_t *o, const char *key, char *out, size_t cap, bool null_ok,
                       const char *path)
{
    const json_t *v = json_object_get(o, key);
    if (!v) return true;
    if (null_ok && json_is_null(v)) {
        out[0] = 0;
        return true;
    }
    if (!json_is_string(v) || json_string_length(v) >= cap) {
        serve_rt_error(rt, "invalid_value", path, "%s must be a string%s of at most %zu bytes", path,
                       null_ok ? " or null" : "", cap - 1);
        return false;
    }
    memcpy(out, json_string_value(v), json_string_length(v) + 1);
    return true;
}

static bool check_language(serve_rt *rt, const char *lang, const char *path)
{
    const serve_config *cfg = rt->cfg;
    if (!lang[0] || !strcasecmp(lang, "auto")) return true;
    if (cfg->multilingual ? sotto_language_token(cfg->model, lang) >= 0 : strcmp(lang, "en") == 0) return true;
    char why[256];
    serve_language_error(lang, cfg, why, sizeof why);
    serve_rt_error(rt, "invalid_value", path, "%s", why);
    return false;
}

/* transcription {model, language, prompt} (PATH: where it is) into C. */
static bool parse_transcription(serve_rt *rt, const json_t *t, rt_config *c, const char *path)
{
    char p[96], model[128] = "";
    if (json_is_null(t)) return true;
    snprintf(p, sizeof p, "%s.model", path);
    if (!json_is_object(t)) {
        serve_rt_error(rt, "invalid_value", path, "%s must be an object", path);
        return false;
    }
    static const char *const keys[] = {"model", "language", "prompt", NULL};
    if (!known_keys(rt, t, path, keys)) return false;
    if (!get_string(rt, t, "model", model, sizeof model, true, p)) return false;
    if (model[0] && strcmp(model, rt->cfg->model_id) != 0 && strcmp(model, "whisper-1") != 0) {
        serve_rt_error(rt, "model_not_found", p, "model '%s' is not served here: this server runs '%s' (whisper-1 "
                       "names it too)", model, rt->cfg->model_id);
        return false;
    }
    snprintf(p, sizeof p, "%s.language", path);
    if (!get_string(rt, t, "language", c->language, sizeof c->language, true, p) || !check_language(rt, c->language, p))
        return false;
    snprintf(p, sizeof p, "%s.prompt", path);
    return get_string(rt, t, "prompt", c->prompt, sizeof c->prompt, true, p);
}

static bool get_number(serve_rt *rt, const json_t *o, const char *key, double lo, double hi, double *out,
                       const char *path)
{
    const json_t *v = json_object_get(o, key);
    if (!v) return true;
    double x = json_number_value(v);
    if (!json_is_number(v) || !isfinite(x) || x < lo || x > hi) {
        serve_rt_error(rt, "invalid_value", path, "%s must be a number from %g to %g", path, lo, hi);
        return false;
    }
    *out = x;
    return true;
}

/* turn_detection: null (manual commits) or {type: "server_vad", threshold,
 * prefix_padding_ms, silence_duration_ms} (other members, OpenAI's response options, are
 * for conversations and ignored). */
static bool parse_turns(serve_rt *rt, const json_t *t, rt_config *c, const char *path)
{
    char p[96];
    if (json_is_null(t)) {
        c->vad = false;
        return true;
    }
    const json_t *type = json_object_get(t, "type");
    snprintf(p, sizeof p, "%s.type", path);
    if (!json_is_object(t) || !json_is_string(type) || strcmp(json_string_value(type), "server_vad") != 0) {
        serve_rt_error(rt, "invalid_value", p, "%s must be null or an object of type server_vad (semantic_vad is "
                       "not served)", path);
        return false;
    }
    static const char *const keys[] = {"type", "threshold", "prefix_padding_ms", "silence_duration_ms",
                                       "create_response", "interrupt_response", "idle_timeout_ms", NULL};
    if (!known_keys(rt, t, path, keys)) return false;
    double thr = c->threshold, pad = c->prefix_padding_ms, sil = c->silence_duration_ms;
    snprintf(p, sizeof p, "%s.threshold", path);
    if (!get_number(rt, t, "threshold", 0.01, 0.99, &thr, p)) return false;
    snprintf(p, sizeof p, "%s.prefix_padding_ms", path);
    if (!get_number(rt, t, "prefix_padding_ms", 0, 10000, &pad, p)) return false;
    snprintf(p, sizeof p, "%s.silence_duration_ms", path);
    if (!get_number(rt, t, "silence_duration_ms", 32, 10000, &sil, p)) return false;
    c->vad = true, c->threshold = thr, c->prefix_padding_ms = (int)pad, c->silence_duration_ms = (int)sil;
    return true;
}

/* The GA session.update's session into C. */
static bool parse_ga(serve_rt *rt, const json_t *s, rt_config *c)
{
    const json_t *type = json_object_get(s, "type");
    if (!json_is_string(type) || strcmp(json_string_value(type), "transcription") != 0) {
        serve_rt_error(rt, "invalid_value", "session.type",
                       "session.type must be \"transcription\": only transcription sessions are served");
        return false;
    }
    c->beta = false;
    static const char *const keys[] = {"type", "audio", "include", NULL}, *const audio_keys[] = {"input", NULL},
                             *const in_keys[] = {"format", "transcription", "turn_detection", "noise_reduction", NULL},
                             *const fmt_keys[] = {"type", "rate", NULL};
    const json_t *audio = json_object_get(s, "audio"), *in = json_is_object(audio) ? json_object_get(audio, "input") : NULL;
    if (!known_keys(rt, s, "session", keys) || !parse_include(rt, json_object_get(s, "include"), "session.include"))
        return false;
    if ((audio && !json_is_object(audio)) || (in && !json_is_object(in))) {
        serve_rt_error(rt, "invalid_value", "session.audio.input", "session.audio.input must be an object");
        return false;
    }
    if (audio && !known_keys(rt, audio, "session.audio", audio_keys)) return false;
    if (!in) return true;
    if (!known_keys(rt, in, "session.audio.input", in_keys) ||
        !parse_noise(rt, json_object_get(in, "noise_reduction"), "session.audio.input.noise_reduction"))
        return false;
    const json_t *fmt = json_object_get(in, "format");
    if (fmt) {
        const json_t *ft = json_object_get(fmt, "type"), *rate = json_object_get(fmt, "rate");
        if (!json_is_object(fmt) || (ft && (!json_is_string(ft) || strcmp(json_string_value(ft), "audio/pcm")))) {
            serve_rt_error(rt, "invalid_value", "session.audio.input.format.type",
                           "the input format must be {\"type\": \"audio/pcm\", \"rate\": 24000 or 16000} (PCM16, "
                           "mono, little-endian)");
            return false;
        }
        if (!known_keys(rt, fmt, "session.audio.input.format", fmt_keys)) return false;
        long long r = json_is_integer(rate) ? json_integer_value(rate) : rate ? -1 : 24000;
        if (r != 24000 && r != 16000) {
            serve_rt_error(rt, "invalid_value", "session.audio.input.format.rate",
                           "session.audio.input.format.rate must be 24000 or 16000");
            return false;
        }
        c->rate = (int)r;
    }
    const json_t *t = json_object_get(in, "transcription"), *td = json_object_get(in, "turn_detection");
    if (t && !parse_transcription(rt, t, c, "session.audio.input.transcription")) return false;
    return !td || parse_turns(rt, td, c, "session.audio.input.turn_detection");
}

/* The beta transcription_session.update's session into C (PCM16 at 24 kHz). */
static bool parse_beta(serve_rt *rt, const json_t *s, rt_config *c)
{
    static const char *const keys[] = {"input_audio_format", "input_audio_transcription", "turn_detection",
                                       "input_audio_noise_reduction", "include", "modalities", "client_secret", NULL};
    if (!known_keys(rt, s, "session", keys) || !parse_include(rt, json_object_get(s, "include"), "session.include") ||
        !parse_noise(rt, json_object_get(s, "input_audio_noise_reduction"), "session.input_audio_noise_reduction"))
        return false;
    const json_t *fmt = json_object_get(s, "input_audio_format");
    if (fmt && (!json_is_string(fmt) || strcmp(json_string_value(fmt), "pcm16") != 0)) {
        serve_rt_error(rt, "invalid_value", "session.input_audio_format", "input_audio_format must be pcm16");
        return false;
    }
    c->beta = true, c->rate = 24000;
    const json_t *t = json_object_get(s, "input_audio_transcription"), *td = json_object_get(s, "turn_detection");
    if (t && !parse_transcription(rt, t, c, "session.input_audio_transcription")) return false;
    return !td || parse_turns(rt, td, c, "session.turn_detection");
}

static void session_update(serve_rt *rt, const json_t *e, bool beta)
{
    const json_t *s = json_object_get(e, "session");
    if (!json_is_object(s)) {
        serve_rt_error(rt, "invalid_value", "session", "the event has no session object");
        return;
    }
    rt_config c = rt->conf; /* checked whole: a refused update changes nothing */
    if (!(beta ? parse_beta(rt, s, &c) : parse_ga(rt, s, &c))) return;
    if (c.rate != rt->conf.rate && rt->n_pcm) {
        serve_rt_error(rt, "invalid_value", "session.audio.input.format.rate",
                       "the input rate cannot change while the buffer holds audio: commit or clear it first");
        return;
    }
    if (!rt_reconfigure(rt, &c)) return;
    send_session(rt, beta ? "transcription_session.updated" : "session.updated");
}

/* ---- client events ---- */

static void append(serve_rt *rt, const json_t *e)
{
    const json_t *a = json_object_get(e, "audio");
    if (!json_is_string(a)) {
        serve_rt_error(rt, "invalid_value", "audio", "input_audio_buffer.append needs audio: base64 of PCM16");
        return;
    }
    size_t n = json_string_length(a), bad;
    unsigned char *pcm = malloc(n / 4 * 3 + 1);
    long long k = pcm ? serve_b64_decode(json_string_value(a), n, pcm, &bad) : -1;
    if (!pcm) serve_rt_error(rt, "server_error", NULL, "out of memory");
    else if (k < 0)
        serve_rt_error(rt, "invalid_audio", "audio", "audio is not base64 (RFC 4648, padded): byte %zu of %zu", bad, n);
    else if (k % 2)
        serve_rt_error(rt, "invalid_audio", "audio", "audio has %lld bytes: PCM16 has 2 a sample", k);
    else rt_append(rt, pcm, (size_t)k);
    free(pcm);
}

void serve_rt_message(serve_rt *rt, const char *text, size_t n)
{
    json_error_t err;
    rt->client_event[0] = 0;
    json_t *e = json_loadb(text, n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &err); /* 42, "hi": JSON, not events */
    if (!e) {
        serve_rt_error(rt, "invalid_json", NULL, "the message is not JSON: %s (at byte %d)", err.text, err.position);
        return;
    }
    const json_t *id = json_object_get(e, "event_id"), *type = json_object_get(e, "type");
    if (json_is_string(id) && json_string_length(id) < sizeof rt->client_event)
        memcpy(rt->client_event, json_string_value(id), json_string_length(id) + 1);
    const char *t = json_is_string(type) ? json_string_value(type) : NULL;
    if (!json_is_object(e) || !t)
        serve_rt_error(rt, "invalid_event", "type", "an event is a JSON object with a string 'type'");
    else if (!strcmp(t, "input_audio_buffer.append")) append(rt, e);
    else if (!strcmp(t, "input_audio_buffer.commit")) rt_commit(rt);
    else if (!strcmp(t, "input_audio_buffer.clear")) rt_clear(rt);
    else if (!strcmp(t, "session.update")) session_update(rt, e, false);
    else if (!strcmp(t, "transcription_session.update")) session_update(rt, e, true);
    else
        serve_rt_error(rt, "unknown_event_type", "type", "unknown event type '%.64s': a transcription session takes "
                       "session.update (or transcription_session.update), input_audio_buffer.append, .commit and "
                       ".clear", t);
    json_decref(e);
    rt->client_event[0] = 0;
}

/* ---- the session ---- */

serve_rt *serve_rt_new(const serve_config *cfg, serve_pool *pool, int id, serve_rt_send send, void *user)
{
    serve_rt *rt = calloc(1, sizeof *rt);
    if (!rt) return NULL;
    rt->cfg = cfg, rt->pool = pool, rt->id = id, rt->send = send, rt->user = user;
    pthread_mutex_init(&rt->mu, NULL);
    pthread_cond_init(&rt->cv, NULL);
    rt_config c = {.rate = 24000, .threshold = 0.5, .prefix_padding_ms = 300, .silence_duration_ms = 500};
    c.vad = cfg->tp.vad != NULL; /* OpenAI's default is server_vad; without a VAD, manual commits */
    if (!rt_reconfigure(rt, &c)) {
        serve_rt_free(rt);
        return NULL;
    }
    return rt;
}

void serve_rt_start(serve_rt *rt)
{
    send_session(rt, "session.created");
}

bool serve_rt_busy(serve_rt *rt)
{
    pthread_mutex_lock(&rt->mu);
    bool busy = rt->running || rt->head;
    pthread_mutex_unlock(&rt->mu);
    return busy;
}

void serve_rt_stop(serve_rt *rt, bool abort)
{
    rt_turns_stop(rt, abort);
}

void serve_rt_free(serve_rt *rt)
{
    if (!rt) return;
    rt_turns_free(rt); /* waits for a running turn */
    sotto_vad_stream_free(rt->vs);
    free(rt->pcm);
    free(rt->vad_pending);
    pthread_cond_destroy(&rt->cv);
    pthread_mutex_destroy(&rt->mu);
    free(rt);
}
