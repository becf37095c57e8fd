// One case of `blackpipe report --spec --driver-cmd`: run OPERATION against URI with the MongoDB Go
// driver's defaults. blackpipe seeds collection `items` (_id 1 to 5) in the URI's database before
// each case and judges by the attempts it counts; our exit status and last line are only shown.
// Written for the Go driver 1.8 (Debian bookworm's golang-mongodb-mongo-driver-dev) and later 1.x.
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o spec-driver spec-driver.go
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
	"go.mongodb.org/mongo-driver/mongo/writeconcern"
	"go.mongodb.org/mongo-driver/x/mongo/driver/connstring"
)

type operation func(ctx context.Context, items *mongo.Collection) error

var operations = map[string]operation{
	"insert": func(ctx context.Context, items *mongo.Collection) error {
		_, err := items.InsertOne(ctx, bson.D{{Key: "spec", Value: "insert"}})
		return err
	},
	"find": func(ctx context.Context, items *mongo.Collection) error {
		var doc bson.M
		return items.FindOne(ctx, bson.D{{Key: "_id", Value: 1}}).Decode(&doc)
	},
	"getMore": func(ctx context.Context, items *mongo.Collection) error {
		cursor, err := items.Find(ctx, bson.D{}, options.Find().SetBatchSize(2))
		if err != nil {
			return err
		}
		defer cursor.Close(ctx)
		for cursor.Next(ctx) { // batches after the first are getMores
		}
		return cursor.Err()
	},
	"updateMany": func(ctx context.Context, items *mongo.Collection) error {
		_, err := items.UpdateMany(ctx, bson.D{},
			bson.D{{Key: "$set", Value: bson.D{{Key: "touched", Value: true}}}})
		return err
	},
	"deleteMany": func(ctx context.Context, items *mongo.Collection) error {
		_, err := items.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: 3}}}})
		return err
	},
	"insertW0": func(ctx context.Context, items *mongo.Collection) error {
		unacknowledged := options.Collection().SetWriteConcern(writeconcern.New(writeconcern.W(0)))
		w0, err := items.Clone(unacknowledged)
		if err != nil {
			return err
		}
		_, err = w0.InsertOne(ctx, bson.D{{Key: "spec", Value: "insertW0"}})
		if err == mongo.ErrUnacknowledgedWrite {
			return nil // the Go driver's way of saying "sent, no reply asked for": success
		}
		return err
	},
}

// describe gives the server's code when there is one (a command error, a write error or a write
// concern error), else the driver's own error: `error 10107: ...`, `error network: ...`.
func describe(err error) string {
	if mongo.IsNetworkError(err) { // a CommandError of code 0 in the Go driver: say what it is
		return "error network: " + err.Error()
	}
	var command mongo.CommandError
	if errors.As(err, &command) {
		return fmt.Sprintf("error %d: %s", command.Code, command.Message)
	}
	var write mongo.WriteException
	if errors.As(err, &write) {
		if len(write.WriteErrors) > 0 {
			return fmt.Sprintf("error %d: %s", write.WriteErrors[0].Code, write.WriteErrors[0].Message)
		}
		if write.WriteConcernError != nil {
			return fmt.Sprintf("error %d: %s", write.WriteConcernError.Code, write.WriteConcernError.Message)
		}
	}
	return "error driver: " + err.Error()
}

func run(uri, name string) error {
	ctx := context.Background()
	// the URI carries retryWrites and retryReads; nothing else is set
	client, err := mongo.Connect(ctx, options.Client().ApplyURI(uri))
	if err != nil {
		return err
	}
	defer client.Disconnect(ctx)
	parsed, err := connstring.ParseAndValidate(uri)
	if err != nil {
		return err
	}
	return operations[name](ctx, client.Database(parsed.Database).Collection("items"))
}

func main() {
	if len(os.Args) != 3 || operations[os.Args[2]] == nil {
		fmt.Println("usage: spec-driver URI insert|find|getMore|updateMany|deleteMany|insertW0")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Println(strings.ReplaceAll(describe(err), "\n", " ")) // the last line blackpipe shows
		os.Exit(1)
	}
	fmt.Println("ok")
}
