package dev.nodelet.karaf.shell;

import dev.nodelet.objectcache.ObjectManager;
import dev.nodelet.shell.views.ObjectViews;
import java.util.List;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.Command;
import org.apache.karaf.shell.api.action.lifecycle.Reference;
import org.apache.karaf.shell.api.action.lifecycle.Service;

/** {@code nodelet:pods}: every registered pod and the objects it references, per manager. */
@Service
@Command(scope = "nodelet", name = "pods", description = "Lists the pods registered with the ConfigMap and Secret "
    + "managers and the objects each references")
public class PodsCommand implements Action {

  @Reference
  List<ObjectManager<?>> managers;

  @Override
  public Object execute() {
    System.out.print(ObjectViews.pods(managers));
    return null;
  }
}
