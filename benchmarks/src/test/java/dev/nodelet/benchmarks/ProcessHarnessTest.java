package dev.nodelet.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Measure 13's parts that need no launcher: the probe of a process, and the rows of runs that failed. */
class ProcessHarnessTest {

  @Test
  void aRunThatFailedGivesItsReasonInEveryRow() {
    ProcessHarness.Run launcher = ProcessHarness.Run.failed("nodelet", 5000,
        new IllegalStateException("nodelet ended with status 1 before it was ready"));
    ProcessHarness.Run informers = ProcessHarness.Run.failed("informers", 5000,
        new IllegalStateException("informers not ready after 10 minutes"));

    List<Row> rows = ProcessHarness.rows(List.<ProcessHarness.Run[]>of(new ProcessHarness.Run[] {launcher, informers}),
        List.of("-XX:+UseSerialGC"), 60);

    // five rows for the count, and the kubelet's reference row
    assertThat(rows).hasSize(6);
    assertThat(rows.subList(0, 5)).allSatisfy(r -> {
      assertThat(r.nodelet()).contains("ended with status 1");
      assertThat(r.baseline()).contains("not ready after 10 minutes");
    });
  }

  @Test
  void probesThisProcessThreadsAndCpu() {
    ProcessProbe probe = new ProcessProbe(ProcessHandle.current().pid());

    Map<String, Integer> threads = probe.threads();

    assertThat(ProcessProbe.count(threads)).isGreaterThanOrEqualTo(Thread.activeCount());
    assertThat(threads).containsKey("Finalizer");
    assertThat(probe.cpuSeconds()).isPositive();
  }

  @Test
  void countsTheClassesOfEachLoaderNamedByItsCommonestPackage() {
    String tree = String.join("\n",
        "+-- <bootstrap>",
        "      |               Classes: java.lang.Object",
        "      |                        java.lang.String",
        "      |                        (2 classes)",
        "      |                        (3 hidden classes)",
        "      +-- org.apache.felix.framework.BundleWiringImpl$BundleClassLoader",
        "      |                     Classes: dev.nodelet.kube.internal.Http2Transport",
        "      |                              jdk.proxy3.$Proxy22",
        "      |                              dev.nodelet.kube.internal.KubeClientFactory",
        "      |                              dev.nodelet.kube.KubeClients",
        "      |                              (4 classes)",
        "      +-- jdk.internal.reflect.DelegatingClassLoader",
        "      |                     Classes: jdk.internal.reflect.GeneratedMethodAccessor1 (invokes: a/B::c ()V)",
        "      |                              (1 class)",
        "      +-- jdk.internal.reflect.DelegatingClassLoader",
        "      |                     Classes: jdk.internal.reflect.GeneratedMethodAccessor2 (invokes: a/B::d ()V)",
        "      |                              (1 class)");

    assertThat(ProcessProbe.classesPerLoader(tree)).isEqualTo("11 classes\n"
        + "5 java.lang (<bootstrap>)\n"
        + "4 dev.nodelet.kube.internal (BundleWiringImpl$BundleClassLoader)\n"
        + "2 jdk.internal.reflect.DelegatingClassLoader\n");
  }

  @Test
  void theEnvironmentPropertyGivesNameValuePairsAndRefusesOthers() {
    System.setProperty(ProcessHarness.ENV, "MALLOC_ARENA_MAX=2  A=b=c");
    try {
      assertThat(ProcessHarness.environment()).containsExactly(Map.entry("MALLOC_ARENA_MAX", "2"),
          Map.entry("A", "b=c"));
      System.setProperty(ProcessHarness.ENV, "MALLOC_ARENA_MAX");
      assertThatThrownBy(ProcessHarness::environment).hasMessageContaining("MALLOC_ARENA_MAX is not NAME=value");
    } finally {
      System.clearProperty(ProcessHarness.ENV);
    }
  }
}
