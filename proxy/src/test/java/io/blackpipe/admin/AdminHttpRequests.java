package io.blackpipe.admin;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A request to an admin server on loopback, as the admin tests send them: HTTP/1.1, headers as given, a body or none. */
final class AdminHttpRequests {
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private AdminHttpRequests() {
    }

    static HttpResponse<String> send(int port, String method, String path, String body, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Sends {@code request} raw, and returns all the server answered (as ISO-8859-1) before it closed the connection. */
    static String raw(int port, byte[] request) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            socket.getOutputStream().write(request);
            socket.getOutputStream().flush();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[4096];
            try {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    answer.write(buffer, 0, n);
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the server left the connection open after: " + answer.toString(StandardCharsets.ISO_8859_1));
            }
            return answer.toString(StandardCharsets.ISO_8859_1);
        }
    }
}
