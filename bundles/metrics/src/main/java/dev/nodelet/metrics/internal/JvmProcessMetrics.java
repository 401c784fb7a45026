package dev.nodelet.metrics.internal;

import io.prometheus.metrics.instrumentation.jvm.JvmBufferPoolMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmClassLoadingMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmCompilationMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmGarbageCollectorMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmMemoryMetrics;
import io.prometheus.metrics.instrumentation.jvm.JvmRuntimeInfoMetric;
import io.prometheus.metrics.instrumentation.jvm.JvmThreadsMetrics;
import io.prometheus.metrics.instrumentation.jvm.ProcessMetrics;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

/**
 * The standard {@code process_*} and {@code jvm_*} metrics of Prometheus client_java's JVM instrumentation, as every
 * Java exporter serves them. Registered one by one rather than through {@code JvmMetrics}, which keeps each registry
 * in a static set (a new endpoint's registry would never be released), and without the memory pool allocation
 * metrics, which add a listener to the JVM's garbage collectors that outlives the bundle.
 */
final class JvmProcessMetrics {

  private JvmProcessMetrics() {}

  static void register(PrometheusRegistry registry) {
    ProcessMetrics.builder().register(registry);
    JvmThreadsMetrics.builder().register(registry);
    JvmMemoryMetrics.builder().register(registry);
    JvmGarbageCollectorMetrics.builder().register(registry);
    JvmBufferPoolMetrics.builder().register(registry);
    JvmClassLoadingMetrics.builder().register(registry);
    JvmCompilationMetrics.builder().register(registry);
    JvmRuntimeInfoMetric.builder().register(registry);
  }
}
