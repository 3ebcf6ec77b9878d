// Pango (FT2 backend for measuring, cairo backend for pictures), fontconfig and cairo, for
// NotesKit/Layout. Only the casts and macros Swift cannot import are wrapped here.
#include <fontconfig/fontconfig.h>
#include <pango/pangoft2.h>
#include <pango/pangofc-fontmap.h>
#include <pango/pangocairo.h>
#include <cairo.h>

static inline void cpango_font_map_set_config(PangoFontMap *map, FcConfig *config) {
    pango_fc_font_map_set_config(PANGO_FC_FONT_MAP(map), config);
}

static inline void cpango_ft2_font_map_set_resolution(PangoFontMap *map, double dpi) {
    pango_ft2_font_map_set_resolution(PANGO_FT2_FONT_MAP(map), dpi, dpi);
}

static inline void cpango_cairo_font_map_set_resolution(PangoFontMap *map, double dpi) {
    pango_cairo_font_map_set_resolution(PANGO_CAIRO_FONT_MAP(map), dpi);
}

static inline void cpango_object_unref(void *object) { g_object_unref(object); }

static inline int cpango_scale(void) { return PANGO_SCALE; }
