package dev.nodelet.karaf.shell;

import dev.nodelet.pods.PodsStatus;
import dev.nodelet.shell.views.ObjectViews;
import dev.nodelet.shell.views.PodViews;
import org.apache.karaf.shell.api.action.Argument;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code nodelet:pods}: every registered pod and the objects it references, per manager; with {@code --receipts},
 * the version of each object each pod is served; with {@code --bundles [<namespace>]}, the pods Nodelet runs as
 * bundles, their containers, bundles and states.
 */
@Service
@Command(scope = "nodelet", name = "pods", description = "Lists the pods registered with the ConfigMap and Secret "
    + "managers and the objects each references; with --bundles, the pods Nodelet runs as bundles")
public class PodsCommand extends ManagersCommand {

  static final String USAGE = "usage: nodelet:pods [--receipts]\n       nodelet:pods --bundles [<namespace>]";

  @Option(name = "--receipts", description = "Per pod and referenced object: the UID and resource version served, "
      + "when it changed on the API server, when Nodelet saw it, and whether it may be stale")
  boolean receipts;

  @Option(name = "--bundles", description = "The pods Nodelet runs as bundles: phase, and per container its state, "
      + "restarts, readiness, image, bundle (id, symbolic name, version, state) and configuration PID")
  boolean bundles;

  @Argument(index = 0, name = "namespace", description = "With --bundles: only the pods of this namespace")
  String namespace;

  /** Optional, so that the commands of this bundle register without the pods component (node mode pods off). */
  @Reference(optional = true)
  PodsStatus podsStatus;

  @Override
  public Object execute() {
    if (bundles && receipts) {
      throw new IllegalArgumentException("nodelet:pods: --receipts and --bundles exclude each other\n" + USAGE);
    }
    if (namespace != null && !bundles) {
      throw new IllegalArgumentException("nodelet:pods: a namespace goes only with --bundles, was given "
          + namespace + "\n" + USAGE);
    }
    System.out.print(bundles ? PodViews.pods(podsStatus, namespace)
        : receipts ? ObjectViews.receipts(managers) : ObjectViews.pods(managers));
    return null;
  }
}
