/* One case of `blackpipe report --spec --driver-cmd`: run OPERATION against URI with the MongoDB C
 * driver's (libmongoc's) defaults. blackpipe seeds collection `items` (_id 1 to 5) in the URI's
 * database before each case and judges by the attempts it counts; our exit status and last line
 * are only shown. Written for libmongoc 1.23 (Debian bookworm's libmongoc-dev) and later 1.x.
 *
 *   gcc -o spec-driver spec-driver.c $(pkg-config --cflags --libs libmongoc-1.0)
 */
#include <mongoc/mongoc.h>
#include <stdio.h>
#include <string.h>

typedef bool (*operation_fn) (mongoc_collection_t *items, bson_error_t *error);

static bool
insert (mongoc_collection_t *items, bson_error_t *error)
{
   bson_t *doc = BCON_NEW ("spec", "insert");
   bool ok = mongoc_collection_insert_one (items, doc, NULL, NULL, error);
   bson_destroy (doc);
   return ok;
}

/* Runs a cursor to its end; batches after the first are getMores when batch_size is set. */
static bool
drain (mongoc_collection_t *items, bson_t *filter, bson_t *opts, bson_error_t *error)
{
   mongoc_cursor_t *cursor = mongoc_collection_find_with_opts (items, filter, opts, NULL);
   const bson_t *doc;
   while (mongoc_cursor_next (cursor, &doc)) {
   }
   bool ok = !mongoc_cursor_error (cursor, error);
   mongoc_cursor_destroy (cursor);
   bson_destroy (filter);
   bson_destroy (opts);
   return ok;
}

static bool
find (mongoc_collection_t *items, bson_error_t *error)
{
   return drain (items, BCON_NEW ("_id", BCON_INT32 (1)), BCON_NEW ("limit", BCON_INT64 (1)), error);
}

static bool
get_more (mongoc_collection_t *items, bson_error_t *error)
{
   return drain (items, bson_new (), BCON_NEW ("batchSize", BCON_INT32 (2)), error);
}

static bool
update_many (mongoc_collection_t *items, bson_error_t *error)
{
   bson_t *filter = bson_new ();
   bson_t *update = BCON_NEW ("$set", "{", "touched", BCON_BOOL (true), "}");
   bool ok = mongoc_collection_update_many (items, filter, update, NULL, NULL, error);
   bson_destroy (filter);
   bson_destroy (update);
   return ok;
}

static bool
delete_many (mongoc_collection_t *items, bson_error_t *error)
{
   bson_t *filter = BCON_NEW ("_id", "{", "$gt", BCON_INT32 (3), "}");
   bool ok = mongoc_collection_delete_many (items, filter, NULL, NULL, error);
   bson_destroy (filter);
   return ok;
}

static bool
insert_w0 (mongoc_collection_t *items, bson_error_t *error)
{
   bson_t *doc = BCON_NEW ("spec", "insertW0");
   bson_t *opts = BCON_NEW ("writeConcern", "{", "w", BCON_INT32 (0), "}");
   bool ok = mongoc_collection_insert_one (items, doc, opts, NULL, error);
   bson_destroy (doc);
   bson_destroy (opts);
   return ok;
}

static const struct {
   const char *name;
   operation_fn run;
} OPERATIONS[] = {{"insert", insert},
                  {"find", find},
                  {"getMore", get_more},
                  {"updateMany", update_many},
                  {"deleteMany", delete_many},
                  {"insertW0", insert_w0}};
static const size_t OPERATION_COUNT = sizeof OPERATIONS / sizeof OPERATIONS[0];

/* Quiet: the driver's log lines (e.g. a server refusing endSessions at client destroy) go to
 * stderr, which blackpipe merges into our output, and would push the result off the last line. */
static void
no_log (mongoc_log_level_t level, const char *domain, const char *message, void *data)
{
   (void) level;
   (void) domain;
   (void) message;
   (void) data;
}

int
main (int argc, char **argv)
{
   operation_fn run = NULL;
   for (size_t i = 0; argc == 3 && i < OPERATION_COUNT; i++) {
      if (strcmp (argv[2], OPERATIONS[i].name) == 0) {
         run = OPERATIONS[i].run;
      }
   }
   if (run == NULL) {
      printf ("usage: spec-driver URI insert|find|getMore|updateMany|deleteMany|insertW0\n");
      return 2;
   }
   mongoc_log_set_handler (no_log, NULL);
   mongoc_init ();
   bson_error_t error;
   mongoc_uri_t *uri = mongoc_uri_new_with_error (argv[1], &error);
   if (uri == NULL) {
      printf ("invalid URI: %s\n", error.message);
      mongoc_cleanup ();
      return 1;
   }
   /* the URI carries retryWrites and retryReads; nothing else is set */
   mongoc_client_t *client = mongoc_client_new_from_uri (uri);
   mongoc_client_set_error_api (client, MONGOC_ERROR_API_VERSION_2);
   mongoc_database_t *database = mongoc_client_get_default_database (client);
   mongoc_collection_t *items = mongoc_database_get_collection (database, "items");
   bool ok = run (items, &error);
   if (ok) {
      printf ("ok\n");
   } else {
      printf ("error %u: %s\n", error.code, error.message); /* a server code, or libmongoc's own */
   }
   fflush (stdout);
   mongoc_collection_destroy (items);
   mongoc_database_destroy (database);
   mongoc_client_destroy (client);
   mongoc_uri_destroy (uri);
   mongoc_cleanup ();
   return ok ? 0 : 1;
}
