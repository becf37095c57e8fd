package io.blackpipe.cli;

import picocli.CommandLine.IVersionProvider;

final class Version implements IVersionProvider {
    static String current() {
        String version = Version.class.getPackage().getImplementationVersion();
        return version == null ? "dev" : version;
    }

    @Override
    public String[] getVersion() {
        return new String[] {"blackpipe " + current()};
    }
}
