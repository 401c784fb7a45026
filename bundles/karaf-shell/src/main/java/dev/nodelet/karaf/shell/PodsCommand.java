package dev.nodelet.karaf.shell;

import dev.nodelet.shell.views.ObjectViews;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.Option;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/**
 * {@code nodelet:pods}: every registered pod and the objects it references, per manager; with {@code --receipts},
 * the version of each object each pod is served.
 */
@Service
@Command(scope = "nodelet", name = "pods", description = "Lists the pods registered with the ConfigMap and Secret "
    + "managers and the objects each references")
public class PodsCommand extends ManagersCommand {

  @Option(name = "--receipts", description = "Per pod and referenced object: the UID and resource version served, "
      + "when it changed on the API server, when Nodelet saw it, and whether it may be stale")
  boolean receipts;

  @Override
  public Object execute() {
    System.out.print(receipts ? ObjectViews.receipts(managers) : ObjectViews.pods(managers));
    return null;
  }
}
