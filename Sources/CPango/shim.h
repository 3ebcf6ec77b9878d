// Pango's FT2 backend (measuring, and rasterizing text for pictures), fontconfig and cairo (pictures),
// for NotesKit/Layout. Only the casts and macros Swift cannot import are wrapped here.
//
// Pictures do not use pangocairo's font map: on Pango 1.50 it lays the same text out taller than the
// FT2 font map does (every layout of a 1 500-layout corpus differed), so text drawn with it would not
// sit in the frames NotesKit measured. Text is rasterized with pango_ft2_render_layout from the very
// layout that was measured, and cairo draws everything else and writes the PNG.
#include <fontconfig/fontconfig.h>
#include <pango/pangoft2.h>
#include <pango/pangofc-fontmap.h>
#include <cairo.h>

static inline void cpango_font_map_set_config(PangoFontMap *map, FcConfig *config) {
    pango_fc_font_map_set_config(PANGO_FC_FONT_MAP(map), config);
}

static inline void cpango_ft2_font_map_set_resolution(PangoFontMap *map, double dpi) {
    pango_ft2_font_map_set_resolution(PANGO_FT2_FONT_MAP(map), dpi, dpi);
}

static inline void cpango_object_unref(void *object) { g_object_unref(object); }

static inline int cpango_scale(void) { return PANGO_SCALE; }

// Windowed measuring (TextMeasurer+Windows.swift): what it needs of a layout line and of the
// paragraph directions, as Pango computes them for a whole layout.
static inline PangoDirection cpango_find_base_dir(const char *text, int length) {
    G_GNUC_BEGIN_IGNORE_DEPRECATIONS
    return pango_find_base_dir(text, length);
    G_GNUC_END_IGNORE_DEPRECATIONS
}

static inline int cpango_line_unknown_glyphs(PangoLayoutLine *line) {
    int count = 0;
    for (GSList *run = line->runs; run; run = run->next) {
        PangoGlyphString *glyphs = ((PangoGlyphItem *)run->data)->glyphs;
        for (int i = 0; i < glyphs->num_glyphs; i++)
            if (glyphs->glyphs[i].glyph & PANGO_GLYPH_UNKNOWN_FLAG) count++;
    }
    return count;
}

static inline PangoLayoutLine *cpango_lines_line(GSList *node) { return (PangoLayoutLine *)node->data; }

// dladdr (a GNU extension the Glibc module does not show): where the shared object holding an
// address was loaded from, so that the fonts the wheel installs beside the library can be found.
typedef struct { const char *dli_fname; void *dli_fbase; const char *dli_sname; void *dli_saddr; } cpango_dl_info;
extern int cpango_dladdr(const void *address, cpango_dl_info *info) __asm__("dladdr");
