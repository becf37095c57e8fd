# blackpipe as a sidecar. Build: docker build -t blackpipe .
# Run:   docker run -e BLACKPIPE_UPSTREAM='mongodb://db1:27017,db2:27017,db3:27017/?replicaSet=rs0' \
#          -e BLACKPIPE_ADVERTISE_HOST=blackpipe --network <the apps' network> --name=blackpipe -p 127.0.0.1:9090:9090 blackpipe
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
COPY pom.xml .
COPY proxy/pom.xml proxy/
COPY proxy/src proxy/src
COPY fault-scripts fault-scripts
COPY bench bench
# The same build as ./blackpipe runs: the proxy module's runnable jar; tests run in CI, not here.
RUN mvn -B -q -pl proxy -am package -DskipTests

FROM eclipse-temurin:17-jre
# Its working directory is its own: a relative BLACKPIPE_HISTORY file, or a JVM crash file, lands there.
RUN useradd --system --uid 10001 --home-dir /opt/blackpipe blackpipe && install -d -o blackpipe -g blackpipe /opt/blackpipe
WORKDIR /opt/blackpipe
COPY --from=build /src/proxy/target/blackpipe.jar blackpipe.jar
USER blackpipe
ENV BLACKPIPE_HOST=0.0.0.0 \
    BLACKPIPE_PORT=27017 \
    BLACKPIPE_ADMIN_HOST=0.0.0.0 \
    BLACKPIPE_ADMIN_PORT=9090
EXPOSE 27017 27018 27019 9090
# `health` asks /health where BLACKPIPE_ADMIN_HOST/_PORT put it (a wildcard address is asked on loopback), as
# every control command does; with the admin port 0 or -1 there is no fixed address to ask (health says so): run
# the container with --no-healthcheck then. Any failure is exit 1, unhealthy: Docker reserves 2, which `health`
# gives a usage error. Each check starts a JVM, which took 1.6-2.2 s on 2 busy cores and up to 3.4 s held to half
# a CPU: past the 3 s this allowed, three in a row marked the proxy unhealthy. Hence 10 s, and the C1 compiler
# alone and the serial collector, which start it sooner (0.72-0.75 s against 0.80-1.01 s on 2 idle cores).
HEALTHCHECK --interval=5s --timeout=10s --start-period=10s --retries=3 \
  CMD ["sh", "-c", "java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar /opt/blackpipe/blackpipe.jar health || exit 1"]
# JVM options as ./blackpipe sets them (ParallelGC: see bench/RESULTS.md); BLACKPIPE_JAVA_OPTS replaces them.
ENTRYPOINT ["sh", "-c", "exec java ${BLACKPIPE_JAVA_OPTS--XX:+UseParallelGC} -jar /opt/blackpipe/blackpipe.jar \"$@\"", "blackpipe"]
CMD ["proxy"]
