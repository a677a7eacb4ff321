/* lang_names.c — openai-whisper's language names (tokenizer.py LANGUAGES and the aliases of
 * TO_LANGUAGE_CODE, whisper 20250625) to the codes the vocabulary's language tokens carry,
 * so `-l German` works as openai's command line takes it, and back (openai prints
 * "Detected language: German"). */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "sotto.h"

static const char *const names[][2] = {
    {"en", "english"}, {"zh", "chinese"}, {"de", "german"}, {"es", "spanish"}, {"ru", "russian"},
    {"ko", "korean"}, {"fr", "french"}, {"ja", "japanese"}, {"pt", "portuguese"}, {"tr", "turkish"},
    {"pl", "polish"}, {"ca", "catalan"}, {"nl", "dutch"}, {"ar", "arabic"}, {"sv", "swedish"},
    {"it", "italian"}, {"id", "indonesian"}, {"hi", "hindi"}, {"fi", "finnish"}, {"vi", "vietnamese"},
    {"he", "hebrew"}, {"uk", "ukrainian"}, {"el", "greek"}, {"ms", "malay"}, {"cs", "czech"},
    {"ro", "romanian"}, {"da", "danish"}, {"hu", "hungarian"}, {"ta", "tamil"}, {"no", "norwegian"},
    {"th", "thai"}, {"ur", "urdu"}, {"hr", "croatian"}, {"bg", "bulgarian"}, {"lt", "lithuanian"},
    {"la", "latin"}, {"mi", "maori"}, {"ml", "malayalam"}, {"cy", "welsh"}, {"sk", "slovak"},
    {"te", "telugu"}, {"fa", "persian"}, {"lv", "latvian"}, {"bn", "bengali"}, {"sr", "serbian"},
    {"az", "azerbaijani"}, {"sl", "slovenian"}, {"kn", "kannada"}, {"et", "estonian"}, {"mk", "macedonian"},
    {"br", "breton"}, {"eu", "basque"}, {"is", "icelandic"}, {"hy", "armenian"}, {"ne", "nepali"},
    {"mn", "mongolian"}, {"bs", "bosnian"}, {"kk", "kazakh"}, {"sq", "albanian"}, {"sw", "swahili"},
    {"gl", "galician"}, {"mr", "marathi"}, {"pa", "punjabi"}, {"si", "sinhala"}, {"km", "khmer"},
    {"sn", "shona"}, {"yo", "yoruba"}, {"so", "somali"}, {"af", "afrikaans"}, {"oc", "occitan"},
    {"ka", "georgian"}, {"be", "belarusian"}, {"tg", "tajik"}, {"sd", "sindhi"}, {"gu", "gujarati"},
    {"am", "amharic"}, {"yi", "yiddish"}, {"lo", "lao"}, {"uz", "uzbek"}, {"fo", "faroese"},
    {"ht", "haitian creole"}, {"ps", "pashto"}, {"tk", "turkmen"}, {"nn", "nynorsk"}, {"mt", "maltese"},
    {"sa", "sanskrit"}, {"lb", "luxembourgish"}, {"my", "myanmar"}, {"bo", "tibetan"}, {"tl", "tagalog"},
    {"mg", "malagasy"}, {"as", "assamese"}, {"tt", "tatar"}, {"haw", "hawaiian"}, {"ln", "lingala"},
    {"ha", "hausa"}, {"ba", "bashkir"}, {"jw", "javanese"}, {"su", "sundanese"}, {"yue", "cantonese"},
    /* TO_LANGUAGE_CODE's aliases */
    {"my", "burmese"}, {"ca", "valencian"}, {"nl", "flemish"}, {"ht", "haitian"}, {"lb", "letzeburgesch"},
    {"ps", "pushto"}, {"pa", "panjabi"}, {"ro", "moldavian"}, {"ro", "moldovan"}, {"si", "sinhalese"},
    {"es", "castilian"}, {"zh", "mandarin"},
};

const char *sotto_language_code(const char *name)
{
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcasecmp(name, names[i][0]) == 0 || strcasecmp(name, names[i][1]) == 0) return names[i][0];
    return NULL;
}

const char *sotto_language_name(const char *code)
{
    if (!code) return NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) /* the first name of a code is LANGUAGES' */
        if (strcmp(code, names[i][0]) == 0) return names[i][1];
    return NULL;
}
