package io.blackpipe.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

final class Stats {
    private Stats() {
    }

    static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>();
        for (Double v : values) {
            if (v != null && !v.isNaN()) {
                sorted.add(v);
            }
        }
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    static double min(List<Double> values) {
        return values.stream().filter(v -> !v.isNaN()).mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    static double max(List<Double> values) {
        return values.stream().filter(v -> !v.isNaN()).mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }
}
